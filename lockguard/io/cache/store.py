"""The store of cache entries: validated reads, atomic writes, one folder per kind.

An entry of kind K under key k lives at <root>/entries/K/<first two hex>/<sha256 hex> (see
entry.py for what is in it). Reads never wait: the file is opened without following a symlink and
with O_NONBLOCK (a FIFO opens at once), and only a regular file is read. Anything else, or an
entry that fails entry.py's checks, is a miss and is removed. Writes go through io/write.py (a
temporary file in the entry's own folder, fsynced, renamed over the entry, the folder fsynced): a
reader, or the next run after a crash, sees the old entry or the new one, and a half-written one
fails its check.

A write that fails because the cache folder itself is unusable (not a folder, read-only, full)
turns the cache's writes off for the run with one warning (root.py); no error reaches the command.
Standard library only and no pathlib: the cached check path uses it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable

from lockguard.errors import InputError
from lockguard.io.cache.entry import HEADER_SIZE, header, key_digest, payload_of
from lockguard.io.cache.root import cache_root, entries_folder, give_up, writable
from lockguard.io.read import read_regular
from lockguard.io.write import remove_quietly, sync_folder, temporary_beside, write_and_sync

MAX_ENTRY = 256 * 1024 * 1024  # larger than any entry lockguard writes (a page body is a few MB)
# a write that fails with one of these says the cache folder is unusable, not one entry
_FOLDER_ERRORS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
    errno.ENOTDIR,
    errno.EEXIST,
}


Naming = Callable[[str, int, str], bytes]  # (kind, version, key) -> the 32 bytes naming an entry


class Store:
    """The entries of one kind. `root` (tests) replaces the cache root; by default the root is
    looked up on every call, so a changed LOCKGUARD_CACHE_DIR takes effect at once. `names`:
    entry.key_digest, or entry.checksum_digest for a kind whose payload holds its key."""

    __slots__ = ("kind", "version", "_root", "_names")

    def __init__(
        self, kind: str, version: int, root: str | None = None, *, names: Naming = key_digest
    ) -> None:
        self.kind = kind
        self.version = version
        self._root = root
        self._names = names

    def __repr__(self) -> str:
        return f"Store({self.kind!r}, version={self.version})"

    def root(self) -> str:
        return self._root or cache_root()

    def folder(self) -> str:
        return os.path.join(entries_folder(self.root()), self.kind)

    def path_of(self, key: str) -> str:
        name = self._names(self.kind, self.version, key).hex()
        return os.path.join(self.folder(), name[:2], name)

    def exists(self, key: str) -> bool:
        """Whether a regular file is there for `key` (not read nor validated: a hint, e.g. to skip
        an early request or a rewrite of a content-addressed entry)."""
        try:
            return stat.S_ISREG(os.lstat(self.path_of(key)).st_mode)
        except OSError:
            return False

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (absent, damaged, another version or key, not a
        regular file: the last four are removed)."""
        digest = self._names(self.kind, self.version, key)
        name = digest.hex()
        path = os.path.join(self.folder(), name[:2], name)
        data = _read(path)
        if data is None:
            return None
        # None for _DAMAGED (shorter than a header)
        payload = payload_of(data, self.version, digest)
        if payload is None:
            _remove(path)
        return payload

    def put(self, key: str, payload: bytes) -> bool:
        """Store `payload` under `key` atomically; False when it was not stored (never raises)."""
        root = self.root()
        if not writable(root):
            return False
        digest = self._names(self.kind, self.version, key)
        name = digest.hex()
        folder = os.path.join(entries_folder(root), self.kind, name[:2])
        path = os.path.join(folder, name)
        try:
            fd, tmp = temporary_beside(path, mode=0o644, make_folder=True)
        except OSError as exc:  # the folder cannot hold a new file
            give_up(root, exc)
            return False
        try:
            write_and_sync(fd, header(self.version, digest, payload), payload)
            _replace(tmp, path)
            sync_folder(folder)
            return True
        except OSError as exc:
            remove_quietly(tmp)
            if exc.errno in _FOLDER_ERRORS - {errno.EEXIST}:
                give_up(root, exc)
            return False

    def discard(self, key: str) -> None:
        _remove(self.path_of(key))

    def prune(self, keep: int) -> None:
        """Keep the `keep` most recently written entries of this kind, remove the others."""
        entries = []
        try:
            with os.scandir(self.folder()) as shards:
                for shard in shards:
                    if shard.is_dir(follow_symlinks=False):
                        with os.scandir(shard.path) as files:
                            entries += [
                                (f.stat(follow_symlinks=False).st_mtime_ns, f.path)
                                for f in files
                                if not f.name.startswith(".")
                            ]
        except OSError:
            return
        for _mtime, path in sorted(entries, reverse=True)[keep:]:
            _remove(path)


_DAMAGED = b""  # _read's answer for a path that holds something other than a readable regular file


def _read(path: str) -> bytes | None:
    """The bytes of a regular file at `path` (never through a symlink); None when there is none;
    _DAMAGED for anything else (a symlink, a FIFO, a socket, too short or too large, unreadable)."""
    try:
        data = read_regular(path, MAX_ENTRY, follow_links=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, InputError):  # never trusted
        return _DAMAGED
    return data if len(data) >= HEADER_SIZE else _DAMAGED


def _remove(path: str) -> None:
    """Remove whatever is at `path` (a folder with its contents; a symlink itself, never its
    target)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            import shutil  # a damaged folder entry only: shutil stays off the cached check's path

            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def _replace(tmp: str, path: str) -> None:
    try:
        os.replace(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise
        _remove(path)  # a folder where the entry belongs: it goes, the entry takes its place
        os.replace(tmp, path)
