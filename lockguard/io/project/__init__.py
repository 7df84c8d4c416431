"""The project's own files: atomic writes, reading the lock files and the repository files that
can contradict them, and the check-result cache."""
