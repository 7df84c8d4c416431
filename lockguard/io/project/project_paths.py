"""The project's own paths: the folder an intent was found in is the project, and the files
lockguard reads and writes there as its own (the lock files of every view, `[outputs]`) stay in it.

A symlinked intent (a team's shared lockguard.toml linked into each project) is read through the
link, but the project stays the link's own folder: the lock files are read and written next to the
link, never next to the file it points to (which may be another project's). A lock file may be a
symlink to a file inside the project; one that leads out of it, or a path that is not a regular
file (a folder, a FIFO, a device, a socket), is refused with exit 2, naming the path and what it
found, before anything is read from it or written. Standard library only: the plain `lockguard
check` path uses it before anything costly is imported.
"""

from __future__ import annotations

import os
import stat

from lockguard.errors import InputError
from lockguard.io.read import FilePath, read_lock_text

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def intent_location(path: FilePath) -> str:
    """The absolute path of an intent file with its folder's symlinks resolved but not its own
    name: a symlinked lockguard.toml keeps the project in the folder that holds the link."""
    text = os.fspath(path)
    folder, name = os.path.split(text)
    return os.path.join(os.path.realpath(folder or "."), name)


def project_folder(intent_path: FilePath) -> str:
    """The project folder of an intent file (intent_location's folder)."""
    return os.path.dirname(intent_location(intent_path))


def inside(where: str, root: str) -> bool:
    """Whether the real path `where` is the real folder `root` or lies below it."""
    return where == root or where.startswith(root.rstrip(os.sep) + os.sep)


def refuse_unsafe(path: FilePath, root: FilePath, *, doing: str) -> None:
    """Refuse a project file that leads out of the project `root` once symlinks are resolved, or
    that exists and is not a regular file; `doing` says what lockguard was about to do ("write",
    "read"). A missing file passes (it is written, or reported missing)."""
    shown = os.fspath(path)
    real_root = os.path.realpath(root)
    where = os.path.realpath(path)
    if not inside(where, real_root):
        raise InputError(
            f"refusing to {doing} {shown}: {_leads_to(shown, where)}, outside the project folder "
            f"{real_root}",
            file=shown,
            hint="lock files are read and written inside the project; "
            "remove the symlink or change [outputs]",
        )
    try:
        info = os.stat(path)  # follows a symlink inside the project to its file
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise InputError(f"cannot {doing} {shown}: {exc.strerror or exc}", file=shown) from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"refusing to {doing} {shown}: it is {_kind(info.st_mode)}, not a regular file",
            file=shown,
            hint="move it away, or point [outputs] at another file name",
        )


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _leads_to(path: str, where: str) -> str:
    """Where a path out of the project leads: 'it is a symlink to ../x (a device)', or, when a
    folder above it is the link, 'it resolves to /x/y'."""
    try:
        link = os.readlink(path)
    except OSError:  # not a symlink itself: a folder above it is one
        return f"it resolves to {where}"
    shown = link if os.path.join(os.path.dirname(path), link) == where else f"{link} ({where})"
    try:
        info = os.stat(where)
    except OSError:
        return f"it is a symlink to {shown}, which does not exist"
    kind = "" if stat.S_ISREG(info.st_mode) else f", {_kind(info.st_mode)}"
    return f"it is a symlink to {shown}{kind}"


def refuse_unsafe_files(root: FilePath, relatives, *, doing: str) -> None:
    """refuse_unsafe for each of the project's files named relative to `root`, all of them before
    any is read or written."""
    for relative in relatives:
        refuse_unsafe(os.path.join(root, relative), root, doing=doing)


def read_project_lock(root: FilePath, relative: str) -> str | None:
    """A lock file's text (None when missing), read only from inside the project `root` and only
    from a regular file (io/read.py: never a FIFO, bounded, UTF-8); else InputError (exit 2)."""
    path = os.path.join(root, relative)
    refuse_unsafe(path, root, doing="read")
    return read_lock_text(path)
