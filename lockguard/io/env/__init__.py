"""Installed environments: the prefix scan (sys.path, RECORDs, conda-meta, files, ELF SONAMEs),
the quarantine and its journal, and applying a lock with the environment's own pip."""
