"""Where the lock files of an intent live (relative to the project folder). Pure."""

from __future__ import annotations

from pathlib import Path

from lockguard.model.intent import Intent


def lock_file(intent: Intent, kind: str, platform: str | None = None) -> str:
    """The relative path of one lock file: requirements.lock, or requirements.linux-64.lock when
    the intent has several platforms (environment.yml likewise; conda-lock.yml holds them all)."""
    filename = {
        "requirements": intent.outputs.requirements,
        "environment": intent.outputs.environment,
        "conda-lock": intent.outputs.conda_lock,
        "pylock": intent.outputs.pylock,
    }[kind]
    if filename is None:  # pylock only: asked for by `[outputs] pylock`
        raise ValueError(f"the intent asks for no {kind} lock file")
    if kind == "conda-lock" or len(intent.platforms) < 2:
        return filename
    path = Path(filename)
    # PEP 751 allows one dot: pylock.gpu-linux-64.toml
    if kind == "pylock" and path.stem != "pylock":
        return str(path.with_name(f"{path.stem}-{platform}{path.suffix}"))
    return str(path.with_name(f"{path.stem}.{platform}{path.suffix}"))


def lock_paths(intent: Intent) -> list[tuple[str, str, str | None]]:
    """(relative path, kind, platform) of every lock file the intent asks for."""
    out: list[tuple[str, str, str | None]] = []
    for platform in intent.platforms:
        out.append((lock_file(intent, "requirements", platform), "requirements", platform))
        if not intent.pip_only:
            out.append((lock_file(intent, "environment", platform), "environment", platform))
        if intent.outputs.pylock:
            out.append((lock_file(intent, "pylock", platform), "pylock", platform))
    if not intent.pip_only:
        out.append((lock_file(intent, "conda-lock"), "conda-lock", None))
    return out
