"""lockguard's own state paths are never a way out: a lock file, a run's manifest or journal, the
folders that hold them are lockguard's to make, and whoever else can write the folder they live in
(another user of a shared conda prefix) must not be able to turn one into a symlink that sends
lockguard's writes elsewhere, a FIFO that blocks it for ever, or a folder where it expects a file.

Every such path is looked at without following a link (lstat, O_NOFOLLOW) and opened without
blocking (O_NONBLOCK: a FIFO cannot hold the open itself); what is not a regular file where a file
belongs, or a real folder where a folder belongs, is refused (exit 2) before anything changes,
naming the path and what was found there: "a symlink to /etc/passwd", "a FIFO", "a folder".
"""

from __future__ import annotations

import errno
import os
import stat

from lockguard.errors import InputError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC
_KINDS = {
    stat.S_IFREG: "a regular file",
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class StatePathRefused(InputError):
    """A path of lockguard's own state holds something lockguard did not make there."""


def found_at(path: str | os.PathLike[str]) -> str | None:
    """What lies at `path`, in words ("a symlink to X", "a FIFO", "a folder"); None when nothing."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"a symlink to {os.readlink(path)}"
        except OSError:
            return "a symlink"
    return _KINDS.get(stat.S_IFMT(info.st_mode), "not a file or folder")


def refuse(path: str | os.PathLike[str], expected: str, found: str | None = None) -> InputError:
    """The refusal of `path`, which should be `expected` ("a regular file", "a folder")."""
    shown = os.fspath(path)
    found = found or found_at(path) or "missing"
    return StatePathRefused(
        f"refusing to use {shown}: lockguard keeps its own state there and expects "
        f"{expected}, but it is {found}; nothing was changed",
        file=shown,
        hint="lockguard never follows a link, nor opens a FIFO, in its own state: remove "
        f"{shown} (if it held lockguard's state, put that back there as {expected}), then run "
        "again",
    )


def is_folder(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a real folder (not a link to one); False when missing; refused when it
    is anything else."""
    return _is(path, "a folder")


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file (not a link to one); False when missing; refused when it
    is anything else."""
    return _is(path, "a regular file")


def _is(path: str | os.PathLike[str], expected: str) -> bool:
    found = found_at(path)
    if found is None:
        return False
    if found != expected:
        raise refuse(path, expected, found)
    return True


def make_folder(path: str | os.PathLike[str]) -> bool:
    """A real folder at `path`, made when missing (its parent must exist): whether it was made.
    A link or a file there is refused; the OSError of the mkdir itself (a permission, a full
    disk) passes through."""
    if is_folder(path):
        return False
    try:
        os.mkdir(path)
    except FileExistsError:  # made meanwhile, by another run or anyone: what is it?
        is_folder(path)
        return False
    return True


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """os.open of a state file, never through a symlink and never blocking on a FIFO; the
    descriptor is checked (fstat) to be a regular file. Refused (StatePathRefused) otherwise; other
    OSErrors (missing, a permission) pass through."""
    try:
        fd = os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EMLINK):
            found = found_at(path)
            if found is not None and found != "a regular file":
                raise refuse(path, "a regular file", found) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(path, "a regular file", _KINDS.get(stat.S_IFMT(info.st_mode)))
    except BaseException:
        os.close(fd)
        raise
    return fd


def same_file(fd: int, path: str | os.PathLike[str]) -> bool:
    """Whether `path` (not followed) is still the file open as `fd`: a lock file removed or
    replaced since it was opened is not the lock any more."""
    try:
        here, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
