"""The project's files written atomically as a set: a reader sees the old files or the new ones,
never half of them (each file through io/write.py, the one atomic writer).

A set of lock files changes all together or not at all: every target is checked first (a regular
file or nothing, inside the project folder after resolving symlinks), every file is staged and
fsynced next to its target, and only then renamed into place; if one rename fails, the ones
already renamed are put back from hard-link backups. SIGINT, SIGTERM and SIGHUP are held back
while the set is staged and committed (io/deferred_signals.py): a signal in the middle ends the
command just after the commit (exit 130, saying the set was written: lockguard/interrupts.py),
with the whole new set in place and no temporary file left. Temporary files of a
run killed outright (SIGKILL, a crash) are named `.<target>.<8 characters>.tmp[.old]`;
`remove_leftovers` clears them (resolve calls it under the project's lock)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.deferred_signals import DeferredSignals
from lockguard.io.project.project_paths import refuse_unsafe
from lockguard.io.write import sync_folder, temporary_beside, write_and_sync


def write_file(
    path: Path,
    data: str | bytes,
    *,
    root: Path | None = None,
    on_commit: Callable[[], None] | None = None,
) -> None:
    """One file of the project, as a set of one (its target checked first, signals held back)."""
    write_all_atomic({Path(path): data}, root=root, on_commit=on_commit)


def check_targets(paths, root: Path | None) -> None:
    """Refuse, before anything is written, a target that is not a regular file (a folder, a FIFO, a
    device), that lies outside `root` once symlinks are resolved, or that is another target."""
    landing: dict[str, Path] = {}
    for path in paths:
        path = Path(path)
        # follows a symlinked file or folder to where a write would land
        where = os.path.realpath(path)
        if where in landing:
            raise InputError(
                f"refusing to write {path}: it is the same file as {landing[where]}",
                file=str(path),
                hint="give each lock file its own name in [outputs]",
            )
        landing[where] = path
        if root is not None:
            refuse_unsafe(path, root, doing="write")
        else:
            refuse_unsafe(path, os.sep, doing="write")  # no project: only what the path is


def write_all_atomic(
    files: Mapping[Path, str | bytes],
    *,
    root: Path | None = None,
    on_commit: Callable[[], None] | None = None,
) -> None:
    """Write several files so that a failure anywhere leaves every one of them as it was.

    An existing file's permissions are kept. `root`: refuse targets outside it. `on_commit` runs
    once they are all in place, before a signal held back meanwhile is delivered (what an
    interrupt then says must already know the set was written)."""
    check_targets(files, root)
    if not files:
        return
    with DeferredSignals():
        _stage_and_commit(files)
        if on_commit is not None:
            on_commit()


def _stage_and_commit(files: Mapping[Path, str | bytes]) -> None:
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = temporary_beside(path, mode=0o600)
            staged.append((tmp, path))
            write_and_sync(fd, data.encode("utf-8") if isinstance(data, str) else data)
            os.chmod(tmp, path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_umask())
        _commit(staged)
        staged = []
    except OSError as exc:
        raise InputError(
            f"cannot write {exc.filename or 'the lock files'}: {exc.strerror or exc}; no file was "
            "changed",
            file=str(exc.filename) if exc.filename else None,
        ) from None
    finally:
        for tmp, _path in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _commit(staged: list[tuple[str, Path]]) -> None:
    """Rename every staged file into place; on a failure, undo the renames already done."""
    backups: list[
        tuple[Path, str | None]
    ] = []  # (target, hard-link backup of the old file or None)
    try:
        for tmp, path in staged:
            backup = None
            if path.is_file():
                backup = f"{tmp}.old"
                try:
                    os.link(path, backup)
                except OSError:  # a file system without hard links
                    # rare: shutil (with bz2 and lzma) stays off a warm resolve's path
                    import shutil

                    shutil.copy2(path, backup)
            backups.append((path, backup))
            _put_in_place(tmp, path)
    # an error, or an exception raised by a signal handler: the old set comes back
    except BaseException:
        for path, backup in reversed(backups):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, path)
                else:
                    os.unlink(path)
        raise
    finally:
        for _path, backup in backups:
            if backup is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(backup)
    for directory in {str(path.parent) for _tmp, path in staged}:
        sync_folder(directory)


def _put_in_place(tmp: str, path: Path) -> None:
    """One staged file renamed over its target (a named step: the tests' fault seam stops here)."""
    os.replace(tmp, path)


def remove_leftovers(paths) -> list[Path]:
    """Remove the temporary files a killed write of these targets left next to them; the removed."""
    removed = []
    for path in map(Path, paths):
        pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp(\.old)?")
        try:
            candidates = [p for p in path.parent.iterdir() if pattern.fullmatch(p.name)]
        except OSError:
            continue
        for candidate in candidates:
            with contextlib.suppress(OSError):
                if stat.S_ISREG(candidate.lstat().st_mode):
                    candidate.unlink()
                    removed.append(candidate)
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
