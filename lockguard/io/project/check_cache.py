"""A content-addressed memo of `lockguard check` results.

The static check is a pure function of: lockguard's version, its constraints files, the options,
the intent file and the files it reads (lock files, requirements*, Dockerfiles, pyproject.toml,
setup.cfg). When none of those bytes changed, the previous output is printed again without
importing or parsing anything else. Standard library only, and not even pathlib (a quarter of
this path's cost): this runs before the rest of lockguard is imported. A miss simply runs the check.
Each result is an entry of the cache layer (io/cache/), keyed by all of the above but the files'
bytes, which the entry lists and whose digest it holds.
"""

from __future__ import annotations

import marshal
import os

from lockguard import __version__
from lockguard.errors import InputError
from lockguard.io.cache.store import Store
from lockguard.io.project.repo_scan import repository_paths
from lockguard.io.project.textfile import LOCK_LIMIT, is_regular_file, read_bytes
from lockguard.model.digest import sha256

ABSENT = b"\0absent\0"
UNREADABLE = b"\0unreadable\0"
RESULTS = Store("check", 1)


def constraints_fingerprint() -> str:
    folder = os.environ.get("LOCKGUARD_CONSTRAINTS")
    if not folder:
        import lockguard.constraints as shipped

        folder = os.path.dirname(shipped.__file__)
    parts = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            stat = entry.stat()
            parts.append(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(parts)


def find_intent_path(intent_path) -> str | None:
    """The intent a plain check would read, or None when the full path must decide (no intent,
    or both lockguard.toml and [tool.lockguard]: the full path says which one is used)."""
    if intent_path is not None:
        return os.fspath(intent_path) if is_regular_file(intent_path) else None
    here = os.getcwd()
    candidate = os.path.join(here, "lockguard.toml")
    pyproject = os.path.join(here, "pyproject.toml")
    in_pyproject = is_regular_file(pyproject) and b"[tool.lockguard" in _bytes(pyproject)
    if is_regular_file(candidate):
        return None if in_pyproject else candidate
    return pyproject if in_pyproject else None


def _bytes(path: str) -> bytes:
    try:
        return read_bytes(path, what="file", limit=LOCK_LIMIT)
    except (OSError, InputError):
        return UNREADABLE


def _digest(root: str, files: list[str]) -> str:
    h = sha256()
    for relative in files:
        path = os.path.join(root, relative)
        data = _bytes(path) if os.path.lexists(path) else ABSENT
        h.update(relative.encode() + b"\0" + sha256(data).digest())
    return h.hexdigest()


class CheckCache:
    def __init__(self, intent_path, options: dict) -> None:
        self.intent_path = os.path.realpath(intent_path)
        self.root = os.path.dirname(self.intent_path)
        h = sha256()
        for part in (__version__, constraints_fingerprint(), self.intent_path,
                     repr(sorted((k, str(v)) for k, v in options.items()))):
            h.update(part.encode() + b"\0")
        h.update(_bytes(self.intent_path))
        self.key = h.hexdigest()

    def lookup(self) -> tuple[str, int] | None:
        """(output, exit code) of an identical earlier check, or None."""
        data = RESULTS.get(self.key)
        if data is None:
            return None
        try:
            entry = marshal.loads(data)  # marshal, not json: json's import is a tenth of this path
        except (ValueError, EOFError, TypeError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("output"), str) or type(entry.get("code")) is not int:
            return None
        if entry.get("repo") != repository_paths(self.root):
            return None  # a file appeared or went away
        try:
            if entry.get("digest") != _digest(self.root, entry.get("files", [])):
                return None
        except (AttributeError, TypeError):  # a damaged entry: a miss
            return None
        return entry["output"], entry["code"]

    def store(self, lock_files: list[str], output: str, code: int) -> None:
        repo = repository_paths(self.root)
        files = sorted(set(lock_files) | set(repo))
        entry = {"repo": repo, "files": files, "digest": _digest(self.root, files), "output": output, "code": code}
        RESULTS.put(self.key, marshal.dumps(entry))  # a cache that cannot be written only costs speed
