"""The one safe reader of lockguard: every file it reads that it did not just write (an intent, a
lock file, a requirements file or Dockerfile, a knowledge file, an environment's RECORD, METADATA
and .pth files, a clean-install's manifest, a fleet report) comes through here.

Only a regular file is read (never a FIFO, a device, a folder or a socket): it is opened with
O_NONBLOCK, so that a FIFO cannot block the open itself, and checked with fstat on the open
descriptor (no window between the check and the read); every read has a size bound, checked again
while reading (a file that grows). Messages name the file: a file the user named by what it is
(`what`: "intent file", "lock file"), an environment's file by its path. Standard library only:
the cached `lockguard check` path reads intents and lock files through it before anything else is
imported.
"""

from __future__ import annotations

import os
import stat

from lockguard.errors import InputError

# a file named by its text or by a Path: files are opened by name (os.open), without pathlib
FilePath = str | os.PathLike[str]

KIB = 1024
MIB = 1024 * KIB
INTENT_LIMIT = 1 * MIB  # an intent is a few hundred bytes; a megabyte is surely not one
LOCK_LIMIT = 64 * MIB  # a multi-platform conda-lock.yml of a large CUDA stack is a few MB
REPO_FILE_LIMIT = 4 * MIB  # requirements*.txt, Dockerfiles, setup.cfg
ENV_FILE_LIMIT = 64 * MIB  # a file of an environment (a RECORD of a large wheel is a few MB)
_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _shown(path: FilePath) -> str:
    """The path as messages print it (pathlib's spelling), imported only for a message: the
    cached check path reads its files through here without pathlib."""
    from pathlib import Path

    return str(Path(path))


class NotRegular(InputError):
    """The path exists but is not a regular file (a FIFO, a device, a folder, a socket)."""


# what a file that is not regular is, for a named file and for an environment's file
_NAMED_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}
_ENV_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def open_regular(
    path: FilePath, limit: int | None = None, *, what: str | None = None, follow_links: bool = True
) -> int:
    """A descriptor of the regular file at `path` of at most `limit` bytes; NotRegular or
    InputError naming it otherwise. An error of the open itself (FileNotFoundError, a permission;
    ELOOP for a symlink when not `follow_links`) passes through."""
    fd = os.open(path, _OPEN if follow_links else _OPEN | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if what is not None:
                kind = _NAMED_KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
                raise NotRegular(
                    f"{what} {_shown(path)} is {kind}, not a regular file",
                    file=_shown(path),
                    hint="lockguard reads only regular files",
                )
            kind = _ENV_KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise NotRegular(
                f"{path} is {kind}, not a regular file",
                file=str(path),
                hint="lockguard reads only regular files here; remove it or put the real file back",
            )
        if limit is not None and info.st_size > limit:
            if what is not None:
                raise InputError(
                    f"{what} {_shown(path)} is {info.st_size:,} bytes; "
                    f"more than the {limit:,} a {what} can be",
                    file=_shown(path),
                    hint="is this the right file?",
                )
            raise InputError(
                f"{path} is {info.st_size} bytes, more than the {limit} bytes such a file may have",
                file=str(path),
                hint="it is damaged or not what its name says; reinstall its package",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_all(fd: int, limit: int) -> bytes | None:
    """Everything from `fd` (closed after), or None when it grew past `limit` while being read."""
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = os.read(fd, min(MIB, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                return None
            chunks.append(chunk)
    finally:
        os.close(fd)


def read_bytes(path: FilePath, *, what: str, limit: int) -> bytes:
    """The bytes of the file `what` names (the user's), at most `limit`. FileNotFoundError passes
    through; anything else that stops the read is an InputError naming the file."""
    try:
        fd = open_regular(path, limit, what=what)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise NotRegular(
            f"{what} {_shown(path)} is a folder, not a file",
            file=_shown(path),
            hint="point it at a file",
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", file=_shown(path)
        ) from None
    data = _read_all(fd, limit)
    if data is None:
        raise InputError(
            f"{what} {_shown(path)} is larger than the {limit:,} bytes a {what} can be",
            file=_shown(path),
            hint="is this the right file?",
        )
    return data


def decode(data: bytes, path: FilePath, *, what: str) -> str:
    """Strict UTF-8; an error names the line and column of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"{_shown(path)}:{line}: the {what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
            f"line {line}, column {column}",
            file=_shown(path),
            line=line,
            hint="lockguard writes UTF-8; rewrite it with `lockguard resolve`"
            if what == "lock file"
            else "save it as UTF-8",
        ) from None


def read_text(path: FilePath, *, what: str, limit: int) -> str:
    return decode(read_bytes(path, what=what, limit=limit), path, what=what)


def read_text_or_none(path: FilePath, *, what: str, limit: int) -> str | None:
    """read_text, or None when the file does not exist."""
    try:
        return read_text(path, what=what, limit=limit)
    except FileNotFoundError:
        return None


def read_lock_text(path: FilePath) -> str | None:
    """A lock file's text (None when missing): a regular UTF-8 file of bounded size, or exit 2."""
    return read_text_or_none(path, what="lock file", limit=LOCK_LIMIT)


def is_regular_file(path: FilePath) -> bool:
    """True for a regular file (following symlinks), without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


# -- an environment's files (named by their path; never the user's to fix by hand) -----------------


def read_regular(
    path: FilePath, limit: int = ENV_FILE_LIMIT, *, follow_links: bool = True
) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; the errors of open_regular (an
    OSError of the open passes through), and an InputError when it grows past `limit`."""
    data = _read_all(open_regular(path, limit, follow_links=follow_links), limit)
    if data is None:
        raise InputError(f"{path} grew past {limit} bytes while it was read", file=str(path))
    return data


def read_env_bytes(
    path: FilePath, limit: int = ENV_FILE_LIMIT, *, missing_ok: bool = True
) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (b"" when it is missing and
    missing_ok)."""
    try:
        return read_regular(path, limit)
    except (FileNotFoundError, NotADirectoryError):
        if missing_ok:
            return b""
        raise InputError(f"{path} does not exist", file=str(path)) from None
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", file=str(path)) from None


def read_env_text(path: FilePath, limit: int = ENV_FILE_LIMIT, *, missing_ok: bool = True) -> str:
    """read_env_bytes as text (a byte that is not UTF-8 becomes U+FFFD: these are parsed, not
    shown)."""
    return read_env_bytes(path, limit, missing_ok=missing_ok).decode("utf-8", errors="replace")


def read_head(path: FilePath, size: int, *, follow_links: bool = True) -> bytes:
    """The first `size` bytes of a regular file (a METADATA's header block, a version file); the
    errors of open_regular."""
    fd = open_regular(path, follow_links=follow_links)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def regular_file_sha256(path):
    """The hashlib sha256 object over the bytes of a regular file, read in chunks (any size);
    NotRegular for something else, OSError when it cannot be opened."""
    import hashlib  # here: the cached check reads through this module and hashes nothing

    digest = hashlib.sha256()
    with os.fdopen(open_regular(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest
