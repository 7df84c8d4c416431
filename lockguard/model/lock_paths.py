"""Where the lock files of an intent live (relative to the project folder). Pure.

The names come from model/lock_names.py (each lock format's naming rules); this module walks them
in the order resolve writes the files."""

from __future__ import annotations

from lockguard.model.intent import Intent
from lockguard.model.lock_names import BY_KIND, LOCK_NAMES


def lock_file(intent: Intent, kind: str, platform: str | None = None) -> str:
    """The relative path of one lock file: requirements.lock, or requirements.linux-64.lock when
    the intent has several platforms (environment.yml likewise; conda-lock.yml holds them all)."""
    return BY_KIND[kind].relative(intent, platform)


def lock_paths(intent: Intent) -> list[tuple[str, str, str | None]]:
    """(relative path, kind, platform) of every lock file the intent asks for: per platform the
    per-platform files, then the files that hold every platform."""
    wanted = [name for name in LOCK_NAMES if name.wanted(intent)]
    out: list[tuple[str, str, str | None]] = []
    for platform in intent.platforms:
        for name in wanted:
            if name.per_platform:
                out.append((name.relative(intent, platform), name.kind, platform))
    for name in wanted:
        if not name.per_platform:
            out.append((name.relative(intent), name.kind, None))
    return out


def project_lock_files(intent: Intent) -> list[str]:
    """Every lock file of a project: its own, or with [profiles] every profile's."""
    return [p for one in intent.profiles or (intent,) for p, _kind, _platform in lock_paths(one)]
