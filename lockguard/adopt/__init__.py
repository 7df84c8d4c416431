"""Adopt existing project files (requirements, pyproject.toml, environment.yml, Dockerfiles) or a
working environment as an intent: `lockguard init --from FILE` / `--from-env PREFIX`. Pure: the
files are read and the environment is asked in lockguard.io.project."""
