"""A memo of `lockguard check` results, keyed by the command line.

The static check is a pure function of: lockguard's code, its constraints files, the command
line as given (the options), the folder it runs in, the environment variables that change a check,
and the bytes of the files it reads (the intent, the lock files, requirements*, Dockerfiles,
pyproject.toml, setup.cfg). The key holds all of that but the files; the entry lists the files
with their bytes, the folder whose lock set the check holds, and the output and exit
code. A command line is looked up before click is imported: it is only part of a key, never
parsed here (the click command, which parses it, stores the entry under the same key). A hit
prints the earlier output again; a miss, or an entry whose files changed, runs the check.

Standard library only, and neither pathlib (a quarter of this path's cost) nor hashlib (a sixth):
this runs before the rest of lockguard is imported. Nothing is hashed: the entry holds its whole
key and the bytes of every file it read, and a hit is the same key and the same bytes, compared
(stronger than equal digests, and cheaper than importing a hash). Each result is an entry of the
cache layer (io/cache/), named by checksums of its key (entry.checksum_digest).
"""

from __future__ import annotations

import marshal
import os

from lockguard import __version__
from lockguard.errors import InputError
from lockguard.io.cache.entry import checksum_digest
from lockguard.io.cache.fingerprints import constraints_fingerprint, package_fingerprint
from lockguard.io.cache.store import Store
from lockguard.io.project.repo_scan import repository_paths
from lockguard.io.read import LOCK_LIMIT, is_regular_file, read_bytes

ABSENT = b"\0absent\0"
UNREADABLE = b"\0unreadable\0"
RESULTS = Store("check", 3, names=checksum_digest)
# the environment a check's output depends on (the constraints read, the cache and colour)
ENVIRONMENT = ("LOCKGUARD_CONSTRAINTS", "LOCKGUARD_CACHE_DIR", "NO_COLOR")


def command_key(argv: list[str] | tuple[str, ...]) -> str:
    """The key of a command line: argv as given, where it runs, what in the environment and in
    lockguard itself (its version and its code) changes a check. Each part ends with a NUL, which
    none can hold (argv, paths and the environment are C strings), so no two differ only in where
    one part ends."""
    parts = [
        __version__,
        package_fingerprint(),
        constraints_fingerprint(),
        os.getcwd(),
        *(os.environ.get(k, "\0") for k in ENVIRONMENT),
        str(len(argv)),
        *argv,
    ]
    return "".join(f"{part}\0" for part in parts)


def find_intent_path(intent_path) -> str | None:
    """The intent a plain check reads, or None when the full check must decide each time (no
    intent, or both lockguard.toml and [tool.lockguard]: the check warns which one it uses)."""
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


def _contents(root: str, files: list[str]) -> list[tuple[str, bytes]]:
    """Where every file really is and its bytes: a file swapped for a symlink (out of the
    project, which the check refuses) to a copy of the same bytes is another file."""
    read = []
    for relative in files:
        path = os.path.join(root, relative)  # an absolute one stays as it is
        data = _bytes(path) if os.path.lexists(path) else ABSENT
        read.append((os.path.realpath(path), data))
    return read


class Remembered:
    """An earlier check of the same command line: what it printed and returned, what it read, and
    the folder whose lock set it held (and whether it waited for it)."""

    __slots__ = ("entry",)

    def __init__(self, entry: dict) -> None:
        self.entry = entry

    @property
    def output(self) -> str:
        return self.entry["output"]

    @property
    def code(self) -> int:
        return self.entry["code"]

    @property
    def lock_folder(self) -> str:
        return self.entry["lock"]

    @property
    def wait(self) -> bool:
        return self.entry["wait"]

    @property
    def json(self) -> bool:
        return self.entry["json"]

    def current(self) -> bool:
        """Whether every file it read still holds the same bytes (and no file appeared or went)."""
        entry = self.entry
        try:
            if any(os.path.realpath(given) != real for given, real in entry["links"]):
                return False  # the intent named is another file now
            if entry["repo"] != repository_paths(entry["root"]):
                return False  # a file appeared or went away
            return entry["contents"] == _contents(entry["root"], entry["files"])
        except (AttributeError, TypeError, ValueError):  # a damaged entry: a miss
            return False


_SHAPE = {
    "output": str,
    "code": int,
    "lock": str,
    "wait": bool,
    "json": bool,
    "root": str,
    "files": list,
    "repo": list,
    "links": list,
    "contents": list,
    "key": str,
}


class CheckResults:
    """The results of one command line."""

    def __init__(self, argv: list[str] | tuple[str, ...]) -> None:
        self.key = command_key(argv)

    def lookup(self) -> Remembered | None:
        """The earlier check of this command line, or None (its files are checked by the caller,
        under the project's lock: Remembered.current)."""
        data = RESULTS.get(self.key)
        if data is None:
            return None
        try:
            entry = marshal.loads(data)  # marshal, not json: json's import is a tenth of this path
        except (ValueError, EOFError, TypeError):
            return None
        if not isinstance(entry, dict) or any(
            type(entry.get(k)) is not t for k, t in _SHAPE.items()
        ):
            return None
        if entry["key"] != self.key:  # another command line whose checksums are the same
            return None
        return Remembered(entry)

    def store(
        self,
        *,
        intent: str,
        default_intent: bool,
        root: str,
        lock_files: list[str] | tuple[str, ...],
        lock_folder: str,
        wait: bool,
        json: bool,
        output: str,
        code: int,
    ) -> None:
        """Remember a check that read `intent` (named on the command line, or found in the working
        folder: then both candidates decide which) and the lock files of the project in `root`."""
        repo = repository_paths(root)
        files = sorted(set(lock_files) | set(repo))
        if default_intent:
            here = os.getcwd()
            files += [os.path.join(here, "lockguard.toml"), os.path.join(here, "pyproject.toml")]
        real = os.path.realpath(intent)
        files.append(real)
        entry = {
            "root": root,
            "files": files,
            "repo": repo,
            "links": [(os.path.abspath(intent), real)],
            "contents": _contents(root, files),
            "key": self.key,
            "lock": lock_folder,
            "wait": wait,
            "json": json,
            "output": output,
            "code": code,
        }
        # a cache that cannot be written only costs speed
        RESULTS.put(self.key, marshal.dumps(entry))
