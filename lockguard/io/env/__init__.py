"""Installed environments: the prefix scan (sys.path, RECORDs, conda-meta, files, ELF SONAMEs),
the clean-install transaction (quarantine, journal, hard links, undo), applying a lock with the
environment's own pip, the import smoke, and bounded reads and child processes."""
