"""Memos of what the environment scan parsed (a dist-info's METADATA, INSTALLER and RECORD; a
library's SONAME), kept between runs in the cache folder. A memo is used only while the stat of
every file it came from (type and mode, device, inode, size, mtime, ctime) is unchanged.

Only parses are memoized, never what exists: the scan lists the prefix every time, so a RECORD
file that disappeared is reported whatever a memo says. A file changed in the last seconds is not
memoized ("racy git": two writes within one timestamp tick would leave the stat equal). Each memo
is one entry of the cache layer (io/cache/: checksummed, versioned, written atomically) keyed by
its header; an entry that fails the layer's checks or does not decode to its schema is ignored
and rewritten. The payload is msgpack decoded into checked types through io/msgspec_adapter.py
(never pickle or marshal for a cache)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import lockguard
from lockguard.io.cache.store import Store
from lockguard.io.msgspec_adapter import TypedMsgpack

FORMAT = "env-scan-v2"  # in every memo's header: another format is another entry
MEMOS = Store("env-scan", 1)
RACY_NS = 5 * 10**9  # wider than any filesystem's timestamp tick (FAT's mtime: 2 s)
MISSING: tuple[int, ...] = ()  # the key of a file that does not exist (a state the parse reads too)
FileKey = tuple[int, ...]


def file_key(path: str | Path) -> FileKey | None:
    """What identifies a file's bytes without reading them: MISSING when there is no file, None
    when it is not a regular file or cannot be asked (then no memo is used)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (
        info.st_mode,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


class Memo:
    """One memo file: name -> (the keys of the files it was parsed from, the parse). Read when
    opened; written (atomically) by save() only when something in it changed."""

    def __init__(self, kind: str, scope: str, value_type) -> None:
        self._old: dict = {}
        self._new: dict[str, tuple] = {}
        self._changed = False
        self.since_ns = time.time_ns() - RACY_NS  # files changed after this are not memoized
        self._codec = TypedMsgpack(tuple[tuple[FileKey, ...], value_type])
        if not self._codec.available:  # without msgspec every scan parses everything
            self.path = None
            return
        self.header = f"lockguard {lockguard.__version__} {FORMAT} {kind}\0{scope}"
        if not _encodable(self.header):  # a folder name that is not UTF-8: no memo for it
            self.path = None
            return
        self.path = MEMOS.path_of(self.header)
        self._old = self._load()

    def _load(self) -> dict:
        data = MEMOS.get(self.header)
        if data is None:
            return {}
        memo = self._codec.decode(data)
        return memo[1] if memo is not None and memo[0] == self.header else {}

    def get(self, name: str, keys: tuple[FileKey | None, ...]):
        """(True, the parse) when `name` was parsed from files with these keys; (False, None)
        else."""
        entry = self._old.get(name)
        if entry is None or None in keys or entry[0] != keys:
            return False, None
        self._new[name] = entry
        return True, entry[1]

    def put(self, name: str, keys: tuple[FileKey | None, ...], value) -> None:
        """Remember a parse (the keys taken before the files were read), unless a file is new."""
        if self.path is None or not _encodable(name):
            return
        if all(
            key is not None and (key == MISSING or max(key[4], key[5]) < self.since_ns)
            for key in keys
        ):
            self._new[name] = (keys, value)
            self._changed = True

    def save(self) -> None:
        if self.path is None or not self._changed and len(self._new) == len(self._old):
            return
        payload = self._codec.encode(self.header, self._new)
        if payload is None:
            return  # a parse holding text that is not UTF-8: parsed again next time
        MEMOS.put(self.header, payload)  # a cache that cannot be written costs time, nothing else


def _encodable(text: str) -> bool:
    """Whether a name can be written as UTF-8 (os.listdir gives undecodable bytes as surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
