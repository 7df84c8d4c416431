"""Read and write the lock files: environment.yml, requirements.lock, conda-lock.yml (byte-stable)."""
