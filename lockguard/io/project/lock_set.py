"""The kernel lock on a project's lock set: exclusive while `resolve` reads and writes the lock
files, shared while `check` reads them. A second run waits, saying for whom ("waiting for resolve
(pid 4242) on the lock set of /src/proj"); with `--no-wait` it exits 2 instead.

Where the lock lives: on the project folder itself (`flock` on a read-only descriptor of the
folder that holds the intent and, by default, its lock files). Not a lock file in the project,
which the user would have to keep out of git; not the intent file, because an editor that saves
it by rename gives the next run another inode to lock while the first still writes, and two
intents in one folder write the same lock files; not a file in the cache folder, which a run with
another cache folder (another user, `LOCKGUARD_CACHE_DIR`) would not see. Every run on the project
finds the same folder inode. Who holds it is written, best effort, to a note in the cache folder
(`locks/`), so that a waiting run can name it. The kernel drops the lock when its holder dies.
A file system that cannot lock a folder (NFS emulates `flock` with byte-range locks, which may
refuse an exclusive one on a read-only descriptor) runs unlocked, with a warning.

The shared path takes its lock with `os` and `fcntl` alone: a plain `lockguard check` takes it on
every commit, before anything costly is imported; only a busy lock loads io/kernel_lock.py.
"""

from __future__ import annotations

import errno
import fcntl
import os
from contextlib import AbstractContextManager

from lockguard.io.cache.root import cache_root

_UNSUPPORTED = {errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL}


class LockSet:
    """`with LockSet(folder, exclusive=..., command=...):` the project's lock set, held."""

    def __init__(
        self, folder, *, exclusive: bool, command: str, wait: bool = True, on_wait=None, warn=None
    ) -> None:
        self.folder = os.fspath(folder) or "."
        self.exclusive = exclusive
        self.command = command
        self.wait = wait
        self.on_wait = on_wait
        self.warn = warn
        self._fd: int | None = None
        # io/kernel_lock.held's context, when the lock was busy at first
        self._held: AbstractContextManager[None] | None = None

    def __enter__(self) -> LockSet:
        if self.exclusive:  # the resolve path: through kernel_lock at once (it imports more anyway)
            self._waiting()
            return self
        try:
            fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
        except OSError:
            return self  # no such folder: the command reports what is missing
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a writer holds it: wait for it, naming it
            os.close(fd)
            self._waiting()
            return self
        except OSError as exc:
            os.close(fd)
            self._tolerate(exc)
            return self
        self._fd = fd
        return self

    def _waiting(self) -> None:
        try:
            self._enter_waiting()
        except OSError as exc:
            self._tolerate(exc)

    def _tolerate(self, exc: OSError) -> None:
        """A folder that went away (the command reports it) or cannot be locked (a warning)."""
        if isinstance(exc, FileNotFoundError):
            return
        if exc.errno not in _UNSUPPORTED:
            raise exc
        if self.warn is not None:
            self.warn(
                f"cannot lock {self.folder} ({exc.strerror}): another lockguard run could change "
                "its lock files at the same time"
            )

    def _enter_waiting(self) -> None:
        """Through io/kernel_lock.py: the holder named, waited for or refused (LockBusy, exit 2)."""
        # only when the lock set is busy: kernel_lock costs ~14 ms, off the cached check's path
        from lockguard.io.kernel_lock import Holder, held

        context = held(
            self.folder,
            exclusive=self.exclusive,
            holder=Holder(self.command, os.getpid()),
            what=f"the lock set of {os.path.abspath(self.folder)}",
            wait=self.wait,
            on_wait=self.on_wait,
            note_path=_note_path(self.folder),
        )
        context.__enter__()
        self._held = context

    def __exit__(self, *exc_info) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            held.__exit__(*exc_info)
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _note_path(folder: str) -> str:
    """Where the holder of `folder`'s lock names itself: the cache folder's locks/, by the folder's
    device and inode (the same for every path that leads to it)."""
    try:
        info = os.stat(folder)
        name = f"project-{info.st_dev}-{info.st_ino}.json"
    except OSError:
        name = "project-unknown.json"
    return os.path.join(cache_root(), "locks", name)
