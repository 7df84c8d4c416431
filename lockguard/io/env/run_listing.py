"""A clean-install run's file listings (transaction.py): before.json, the tree the engine starts
from (each file's size, mtime, inode and a link's target), installed.json, what the run added or
replaced, and how the tree as it is now differs from before.json (what undo removes when a run
was killed before installed.json was written)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.env.file_listing import list_tree
from lockguard.io.env.quarantine import Quarantine
from lockguard.io.read import MIB, read_env_text

LISTING_LIMIT = 1024 * MIB


def signature(info: os.stat_result, link: str | None = None) -> list:
    return [info.st_size, info.st_mtime_ns, info.st_ino, link]


def stat_signature(full: Path) -> tuple[os.stat_result, list] | None:
    """lstat of `full` and its signature (a link's with its target); None when it is gone."""
    try:
        info = os.lstat(full)
    except OSError:
        return None
    return info, signature(info, os.readlink(full) if stat.S_ISLNK(info.st_mode) else None)


def engine_part_pending(q: Quarantine, events: list[dict]) -> bool:
    """The run got to pip (before.json exists) and no undo has removed what it installed yet."""
    names = {e["event"] for e in events}
    return "apply-start" in names and "removed" not in names and q.before_path.exists()


def load_listing(path: Path) -> dict:
    try:
        data = json.loads(read_env_text(path, LISTING_LIMIT, missing_ok=False))
    except (ValueError, RecursionError):
        data = None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("files"), dict)
        or not isinstance(data.get("dirs"), list)
    ):
        raise InputError(
            f"{path} is not a lockguard file listing",
            file=str(path),
            hint="the quarantine folder is damaged; "
            "move it out of .lockguard/quarantine/ and run again",
        )
    return data


def tree_changes(
    q: Quarantine, before: dict
) -> tuple[dict[str, list], list[str], list[str], list[str]]:
    """(signatures of what the run added or replaced, the replaced ones, files changed in place,
    folders it created), from the tree as it is against before.json."""
    files, dirs = list_tree(str(q.prefix))
    old = before["files"]
    out: dict[str, list] = {}
    replaced, modified = [], []
    for path in files:
        found = stat_signature(q.prefix / path)
        if found is None:
            continue
        now = found[1]
        was = old.get(path)
        if was is None:
            out[path] = now
        elif was[2] != now[2] or was[3] != now[3]:
            out[path] = now
            replaced.append(path)
        elif was[:2] != now[:2]:
            modified.append(path)
    known = set(before["dirs"])
    return out, replaced, modified, [d for d in dirs if d not in known]


def added_by_run(q: Quarantine) -> tuple[dict[str, list | None], list[str]]:
    """(files the run added or replaced, with their signatures when installed.json has them;
    folders it created)."""
    if q.installed_path.exists():
        done = load_listing(q.installed_path)
        return dict(done["files"]), list(done["dirs"])
    added, _replaced, _modified, created = tree_changes(q, load_listing(q.before_path))
    return dict.fromkeys(added), created
