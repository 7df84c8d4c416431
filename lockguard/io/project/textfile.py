"""Reading a user's file safely: a regular file (never a FIFO, a device or a folder), a size
bound, strict UTF-8 with the line of the first bad byte. Standard library only: the cached
`lockguard check` path reads intents and lock files through it before anything else is imported.
"""

from __future__ import annotations

import os
import stat

from lockguard.errors import InputError

KIB = 1024
MIB = 1024 * KIB
INTENT_LIMIT = 1 * MIB  # an intent is a few hundred bytes; a megabyte is surely not one
LOCK_LIMIT = 64 * MIB  # a multi-platform conda-lock.yml of a large CUDA stack is a few MB
REPO_FILE_LIMIT = 4 * MIB  # requirements*.txt, Dockerfiles, setup.cfg


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the check path avoids it)
if TYPE_CHECKING:
    from pathlib import Path


def _shown(path) -> str:
    """The path as messages print it (pathlib's spelling), imported only for a message: the
    cached check path reads its files through here without pathlib."""
    from pathlib import Path

    return str(Path(path))


class NotRegular(InputError):
    """The path exists but is not a regular file (a FIFO, a device, a folder, a socket)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: Path, *, what: str, limit: int) -> bytes:
    """The bytes of `path`, refusing anything but a regular file of at most `limit` bytes.

    Opened with O_NONBLOCK so that a FIFO cannot block the open itself, then checked with fstat
    on the open descriptor (no window between the check and the read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise NotRegular(f"{what} {_shown(path)} is a folder, not a file", file=_shown(path),
                         hint="point it at a file") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", file=_shown(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{what} {_shown(path)} is {_kind(info.st_mode)}, not a regular file", file=_shown(path),
                             hint="lockguard reads only regular files")
        if info.st_size > limit:
            raise InputError(f"{what} {_shown(path)} is {info.st_size:,} bytes; more than the {limit:,} a {what} can be",
                             file=_shown(path), hint="is this the right file?")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise InputError(f"{what} {_shown(path)} is larger than the {limit:,} bytes a {what} can be",
                                 file=_shown(path), hint="is this the right file?")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode(data: bytes, path: Path, *, what: str) -> str:
    """Strict UTF-8; an error names the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{_shown(path)}:{line}: the {what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
                         f"line {line}, column {column}", file=_shown(path), line=line,
                         hint="lockguard writes UTF-8; rewrite it with `lockguard resolve`" if what == "lock file"
                         else "save it as UTF-8") from None


def read_text(path: Path, *, what: str, limit: int) -> str:
    return decode(read_bytes(path, what=what, limit=limit), path, what=what)


def read_text_or_none(path: Path, *, what: str, limit: int) -> str | None:
    """read_text, or None when the file does not exist."""
    try:
        return read_text(path, what=what, limit=limit)
    except FileNotFoundError:
        return None


def is_regular_file(path: Path) -> bool:
    """True for a regular file (following symlinks), without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
