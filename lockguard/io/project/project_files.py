"""Read what `lockguard check` looks at: the lock files of an intent (pylock.toml included), and
the repository's other files that can contradict them (requirements*.txt/.in, Dockerfiles, pyproject.toml, setup.cfg)."""

from __future__ import annotations

from pathlib import Path

from lockguard.check.snapshot import LockFile, Snapshot
from lockguard.io.project.repo_scan import repository_paths
from lockguard.model.intent import Intent


def lock_file(intent: Intent, kind: str, platform: str | None = None) -> str:
    """The relative path of one lock file: requirements.lock, or requirements.linux-64.lock when
    the intent has several platforms (environment.yml likewise; conda-lock.yml holds them all)."""
    filename = {"requirements": intent.outputs.requirements, "environment": intent.outputs.environment,
                "conda-lock": intent.outputs.conda_lock, "pylock": intent.outputs.pylock}[kind]
    if kind == "conda-lock" or len(intent.platforms) < 2:
        return filename
    path = Path(filename)
    if kind == "pylock" and path.stem != "pylock":  # PEP 751 allows one dot: pylock.gpu-linux-64.toml
        return str(path.with_name(f"{path.stem}-{platform}{path.suffix}"))
    return str(path.with_name(f"{path.stem}.{platform}{path.suffix}"))


def lock_paths(intent: Intent) -> list[tuple[str, str, str | None]]:
    """(relative path, kind, platform) of every lock file the intent asks for."""
    out = []
    for platform in intent.platforms:
        out.append((lock_file(intent, "requirements", platform), "requirements", platform))
        if not intent.pip_only:
            out.append((lock_file(intent, "environment", platform), "environment", platform))
        if intent.outputs.pylock:
            out.append((lock_file(intent, "pylock", platform), "pylock", platform))
    if not intent.pip_only:
        out.append((lock_file(intent, "conda-lock"), "conda-lock", None))
    return out


def read_snapshot(intent: Intent, *, scan_repo: bool = True) -> Snapshot:
    from lockguard.lockfiles import conda_lock, environment_yml, pylock, requirements_lock
    from lockguard.lockfiles.headers import read_header

    root = intent.source.root
    snapshot = Snapshot(intent, intent.source.path.name)
    for relative, kind, platform in lock_paths(intent):
        try:
            text = (root / relative).read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        lock = LockFile(relative, text, kind, platform)
        if text is not None:
            header = read_header(text)
            lock.header = header if header.intent_hash else None
            if kind == "requirements":
                lock.requirements = requirements_lock.parse(text)
            elif kind == "environment":
                lock.environment = environment_yml.parse(text)
            elif kind == "pylock":
                lock.pylock = pylock.read(text)
            else:
                lock.conda_lock = conda_lock.read(text)
        snapshot.files.append(lock)
    if scan_repo:
        snapshot.repo_files = repository_files(root, exclude={p for p, _k, _pl in lock_paths(intent)})
    return snapshot


def repository_files(root: Path, exclude: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for relative in repository_paths(root):
        if relative in exclude:
            continue
        try:
            found[relative] = (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found
