"""The one atomic writer of lockguard: lock files and the intent, fleet reports, cache entries, a
clean-install's manifest, journal and listings all reach the disk through here.

The bytes go to a new file next to the target (created exclusively, never through a symlink),
are flushed and fsynced, the file is renamed over the target and the folder is fsynced: a reader,
or the next run after a crash, finds the old file or the new one, never half of one, and a write
that fails leaves no temporary file. A temporary file is named `.<target>.<8 characters>.tmp`, so
what a killed run left is recognisable (io/project/files.py clears it). Standard library only:
the cache layer uses it on the check path.
"""

from __future__ import annotations

import os
import stat

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_CREATE = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def temporary_beside(path, *, mode: int = 0o666, make_folder: bool = False) -> tuple[int, str]:
    """A new, empty file in the folder of `path`, open for writing: (its descriptor, its name).
    `make_folder`: create the folder when it is missing."""
    folder, name = os.path.split(os.fspath(path))
    for _attempt in range(100):
        suffix = "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in os.urandom(8))
        temporary = os.path.join(folder, f".{name}.{suffix}.tmp")
        try:
            return os.open(temporary, _CREATE, mode), temporary
        except FileExistsError:
            continue
        except FileNotFoundError:
            if not make_folder:
                raise
            os.makedirs(folder or ".", exist_ok=True)
            make_folder = False
        except OSError as exc:  # a read-only folder: name the file the user asked for, not ours
            raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
    raise FileExistsError(f"no free temporary name next to {path}")


def write_and_sync(fd: int, *chunks: bytes) -> None:
    """Write every chunk to `fd`, fsync it and close it (closed on failure too)."""
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder, *, strict: bool = False) -> None:
    """fsync a folder, so that a rename in it survives a crash; errors ignored unless `strict`."""
    try:
        fd = os.open(
            folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        if strict:
            raise


def remove_quietly(path) -> None:
    try:  # noqa: SIM105 (contextlib imports collections: the cached check path avoids it)
        os.unlink(path)
    except OSError:
        pass


def write_atomic(path, data: str | bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` (text is written as UTF-8), atomically. The new file keeps the
    permissions of the one it replaces (`mode` to choose them). OSError when it cannot be done;
    then nothing changed."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = temporary_beside(path)
    try:
        write_and_sync(fd, payload)
        os.chmod(temporary, mode if mode is not None else _mode_of(path))
        os.replace(temporary, path)
    except BaseException:
        remove_quietly(temporary)
        raise
    sync_folder(os.path.dirname(os.fspath(path)), strict=True)


def _mode_of(path) -> int:
    """The permissions of the file at `path`, else those a new file gets (0o666 less the umask)."""
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode):
            return stat.S_IMODE(info.st_mode)
    except OSError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
