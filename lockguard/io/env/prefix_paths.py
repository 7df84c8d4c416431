"""Paths inside a prefix as the quarantine and its undo touch them: what is a plain relative path
(never absolute, `..`, or lockguard's own state folder), its absolute path with no parent that is
a link out of the prefix, a regular file's sha256, and an OSError in a user's words."""

from __future__ import annotations

import os
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.env.file_listing import STATE_DIR
from lockguard.io.read import regular_file_sha256


def os_cause(exc: OSError) -> str:
    """What an OSError says to a user: "No space left on device", "Permission denied: PATH"."""
    text = exc.strerror or str(exc)
    return f"{text}: {exc.filename}" if exc.filename and exc.errno != 28 else text


def sha256_of(path: Path) -> str | None:
    """None for what is not a regular file (a FIFO in a RECORD moves as it is, unread)."""
    try:
        return regular_file_sha256(path).hexdigest()
    except InputError:
        return None


def path_problem(relative: object) -> str | None:
    """Why `relative` is not a plain path inside a prefix (None when it is): absolute paths, `..`,
    empty parts and lockguard's own state folder are never touched."""
    parts = relative.split("/") if isinstance(relative, str) else [""]
    if (
        not isinstance(relative, str)
        or relative[:1] == "/"
        or any(part in ("", ".", "..") for part in parts)
    ):
        return "not a plain path inside the prefix"
    if "\0" in relative:
        return "a path with a NUL byte"
    if parts[0] == STATE_DIR:
        return "lockguard's own state folder"
    return None


def safe_relative(prefix: Path, relative: str, seen: dict[str, str] | None = None) -> Path:
    """The absolute path of `relative` in the prefix; refuses anything that leaves it: absolute
    paths, `..`, and parents that are symlinks out of the prefix. `seen` caches resolved folders
    for one pass over many files (a CUDA environment has tens of thousands)."""
    problem = path_problem(relative)
    if problem:
        raise InputError(f"refusing to touch {relative!r}: {problem}", hint="this is never done")
    cache = seen if seen is not None else {}
    root = cache.get("") or os.path.realpath(prefix)
    cache[""] = root
    full = f"{root}/{relative}"
    folder = full.rsplit("/", 1)[0]
    parent = cache.get(folder)
    if parent is None:
        parent = cache[folder] = os.path.realpath(folder)
    if parent != root and not parent.startswith(root + os.sep):
        raise InputError(
            f"refusing to touch {relative!r}: its folder is a link out of the prefix ({parent})"
        )
    return Path(full)
