"""Read and write the lock files: environment.yml, requirements.lock, conda-lock.yml and the opt-in
pylock.toml (byte-stable)."""
