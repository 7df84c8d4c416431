"""Before a clean-install changes anything: can lockguard move every file the plan moves, and how
many bytes will the quarantine hold? A file it cannot read (its sha256 goes into the manifest), a
folder it cannot write (a rename changes the folder), and an immutable or append-only file or
folder (`chattr +i`, `+a`: not even root renames it) stop the run before the first move; a dry
run lists them. Reads only: an lstat per file, and for regular files an open and the file
system's flags (FS_IOC_GETFLAGS, the ioctl `lsattr` uses).

A move into the quarantine is a rename (atomic, no second copy, what restore's byte-identical
promise rests on), so a file on another file system than `<prefix>/.lockguard/quarantine` (a
site-packages that is a container volume, a bind mount, a link to another disk) cannot move: the
rename would fail with EXDEV part-way. Such files are refused here, naming the two file systems
(their st_dev), before anything changes; the quarantine is never made a copy."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field

_FS_IOC_GETFLAGS = 0x80086601  # _IOR('f', 1, long) on 64-bit Linux
_FS_IMMUTABLE_FL = 0x10
_FS_APPEND_FL = 0x20


@dataclass(frozen=True, slots=True)
class Blocked:
    path: str  # relative to the prefix
    why: str  # "unreadable (mode 000)", "immutable (chattr +i)", "its folder ... is not writable"


@dataclass(frozen=True, slots=True)
class MovesSurvey:
    sizes: Mapping[str, int] = field(default_factory=dict)  # path -> bytes, of what exists
    blocked: tuple[Blocked, ...] = ()


def quarantine_device(prefix: str) -> int | None:
    """The file system the quarantine lives on: its folder's, else the nearest existing folder
    above it (the state folder, the prefix)."""
    for where in (f"{prefix}/.lockguard/quarantine", f"{prefix}/.lockguard", prefix):
        try:
            return os.stat(where).st_dev
        except OSError:
            continue
    return None


def survey_moves(prefix: str, paths: list[str]) -> MovesSurvey:
    device = quarantine_device(prefix)
    sizes: dict[str, int] = {}
    blocked: list[Blocked] = []
    folders: dict[str, str | None] = {}  # folder -> why it blocks, or None
    for path in paths:
        full = f"{prefix}/{path}"
        try:
            info = os.lstat(full)
        except OSError:
            continue  # gone since the scan: nothing to move
        sizes[path] = info.st_size
        folder = os.path.dirname(full)
        if folder not in folders:
            folders[folder] = _folder_problem(folder) or _device_problem(folder, device, prefix)
        why = folders[folder] or (_file_problem(full, info) if stat.S_ISREG(info.st_mode) else None)
        if why:
            blocked.append(Blocked(path, why))
    return MovesSurvey(sizes, tuple(blocked))


def _folder_problem(folder: str) -> str | None:
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable by this user"
    flags = _flags(folder, os.O_RDONLY | os.O_DIRECTORY)
    if flags & _FS_IMMUTABLE_FL:
        return f"its folder {folder} is immutable (chattr +i)"
    if flags & _FS_APPEND_FL:
        return f"its folder {folder} is append-only (chattr +a)"
    return None


def _device_problem(folder: str, device: int | None, prefix: str) -> str | None:
    try:
        here = os.stat(folder).st_dev
    except OSError:
        return None
    if device is None or here == device:
        return None
    return (
        f"its folder {folder} is on another file system (device {os.major(here)}:"
        f"{os.minor(here)}) than the quarantine {prefix}/.lockguard/quarantine (device "
        f"{os.major(device)}:{os.minor(device)}); a move into it cannot be a rename"
    )


def _file_problem(full: str, info: os.stat_result) -> str | None:
    if not os.access(full, os.R_OK):
        return f"unreadable by this user (mode {stat.S_IMODE(info.st_mode):03o})"
    flags = _flags(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    if flags & _FS_IMMUTABLE_FL:
        return "immutable (chattr +i)"
    if flags & _FS_APPEND_FL:
        return "append-only (chattr +a)"
    return None


def _flags(path: str, mode: int) -> int:
    """The file system's inode flags; 0 where it has none to give (tmpfs, overlayfs on some
    kernels)."""
    try:
        fd = os.open(path, mode | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        buffer = bytearray(8)
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buffer)
        return int.from_bytes(buffer[:4], "little")
    except OSError:
        return 0
    finally:
        os.close(fd)
