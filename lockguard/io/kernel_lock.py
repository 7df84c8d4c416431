"""Advisory locks from the kernel (`fcntl.flock`) on lockguard's own state: a prefix while
clean-install or restore changes it (shared while `check --env` reads it), a project's lock set
while resolve writes it (shared while check reads it).

The kernel drops a lock when the process holding it dies, so a lock left by a dead run is simply
taken over: no pid file can go stale. An exclusive holder writes who it is into the lock file, so a
second run can say whom it waits for ("waiting for clean-install 20261201-1203 (pid 4242) on
.venv"); it empties the file again before it lets go.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lockguard.errors import InputError
from lockguard.io.read import read_head
from lockguard.io.state_paths import StatePathRefused, open_file, same_file


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds an exclusive lock: the command, its run id (if any) and its process."""

    command: str
    pid: int
    run: str = ""

    def describe(self) -> str:
        run = f" {self.run}" if self.run else ""
        return f"{self.command}{run} (pid {self.pid})"


class LockBusy(InputError):
    """Another lockguard run holds the lock and the caller asked not to wait (`--no-wait`)."""


def read_holder(lock_path: str | os.PathLike[str]) -> Holder | None:
    """The exclusive holder a lock file names, or None (free, held shared, or unreadable)."""
    try:  # never blocks: a FIFO planted at the path names no one, a symlink is not followed
        data = json.loads(read_head(lock_path, 4096, follow_links=False).decode("utf-8") or "null")
        return Holder(str(data["command"]), int(data["pid"]), str(data.get("run", "")))
    except (OSError, ValueError, TypeError, KeyError, InputError):
        return None


@contextlib.contextmanager
def held(
    lock_path: str | os.PathLike[str],
    *,
    exclusive: bool,
    holder: Holder,
    what: str,
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    note_path: str | os.PathLike[str] | None = None,
    reopen: Callable[[], None] | None = None,
    drop: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold the lock on `lock_path` (created if missing) for the `with` block.

    `what` names the locked thing in messages ("the prefix .venv"). Busy: without `wait`, raise
    LockBusy (exit 2); with it, tell `on_wait` once whom we wait for, then block until free.
    `note_path`: lock `lock_path` as it is, read-only (a folder can be locked so), and name the
    exclusive holder in the file `note_path` instead
    (best effort: unnamed when it cannot be written).
    The lock file is never opened through a symlink, and only a regular file is one (else
    StatePathRefused, exit 2). A lock file removed while we waited for it (its last holder dropped
    it) is opened again, after `reopen()` (which makes its folder again). `drop()` runs as we let
    go, only while no one else holds the lock: it may remove the lock file (and its folder).
    """
    for attempt in range(10):
        try:
            fd = (
                _open(lock_path, exclusive=exclusive)
                if note_path is None
                else os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
            )
        except FileNotFoundError:  # its folder went with the lock's last holder: made again
            if reopen is None or attempt == 9:
                raise
            reopen()
            continue
        # a reader of state it cannot write (a read-only prefix): nobody can be changing it
        if fd is None:
            yield
            return
        try:
            _acquire(
                fd,
                note_path or lock_path,
                exclusive=exclusive,
                what=what,
                wait=wait,
                on_wait=on_wait,
            )
        except BaseException:
            os.close(fd)
            raise
        if note_path is not None or same_file(fd, lock_path):
            break
        os.close(fd)  # the file we waited on was dropped: the lock is the one at the path now
        if reopen is not None:
            reopen()
    else:
        raise OSError(errno.EAGAIN, f"{what}: its lock file keeps being removed", str(lock_path))
    try:
        named = (fd if note_path is None else _open_note(note_path)) if exclusive else None
        if named is not None:
            with _unless_a_note(named != fd):
                _write_holder(named, holder)
        try:
            yield
        finally:
            if named is not None:
                with _unless_a_note(named != fd):
                    _write_holder(named, None)
                if named != fd:
                    os.close(named)
            if drop is not None and note_path is None:
                _drop(fd, lock_path, drop)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _drop(fd: int, lock_path, drop: Callable[[], None]) -> None:
    """`drop()` while no one else holds the lock file: a run waiting on it then finds it gone and
    opens the one at the path (held())."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a reader's lock becomes ours alone
    except OSError:
        return  # another run holds it too: it stays
    if same_file(fd, lock_path):
        with contextlib.suppress(OSError):
            drop()


def _unless_a_note(note: bool):
    """A note that cannot be written (a full cache folder) only leaves the holder unnamed."""
    return contextlib.suppress(OSError) if note else contextlib.nullcontext()


def _open_note(note_path) -> int | None:
    try:
        os.makedirs(os.path.dirname(os.fspath(note_path)) or ".", exist_ok=True)
        return os.open(
            note_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o644
        )
    except OSError:
        return None


def _open(lock_path, *, exclusive: bool) -> int | None:
    try:
        return open_file(lock_path, os.O_RDWR | os.O_CREAT)
    except (StatePathRefused, FileNotFoundError):  # no folder: none to read without a lock
        raise
    except OSError as exc:
        if exclusive:
            raise
        try:
            return open_file(lock_path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except StatePathRefused:
            raise
        except OSError:
            raise exc from None


def _acquire(fd: int, lock_path, *, exclusive: bool, what: str, wait: bool, on_wait) -> None:
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    message = f"waiting for {_who(lock_path)} on {what}"
    if not wait:
        raise LockBusy(
            f"{what} is in use by {_who(lock_path)}",
            hint="wait for it to finish, or run again without --no-wait to wait for it",
        )
    if on_wait is not None:
        on_wait(message)
    fcntl.flock(fd, mode)  # blocks; Ctrl-C still interrupts it (PEP 475 retries only on resume)


def _who(lock_path) -> str:
    # The holder writes its name just after it takes the lock: give it a moment to appear.
    for _ in range(5):
        holder = read_holder(lock_path)
        if holder is not None:
            return holder.describe()
        time.sleep(0.02)
    return "another lockguard run"


def _write_holder(fd: int, holder: Holder | None) -> None:
    text = (
        ""
        if holder is None
        else json.dumps({"command": holder.command, "pid": holder.pid, "run": holder.run})
    )
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode("utf-8"), 0)
    except OSError:  # a full disk: the lock holds all the same; waiters say "another lockguard run"
        pass


def live_holder(lock_path: str | os.PathLike[str]) -> Holder | None:
    """The exclusive holder of the lock when another open file holds it now, else None (free,
    held shared, unreadable): lets a reader that takes no lock (a listing) tell a running run
    from one that died, without waiting. Our own holding counts as another open file: the
    caller compares the holder's pid with its own."""
    try:  # never through a symlink, never blocked by a FIFO
        fd = open_file(lock_path, os.O_RDONLY)
    except (OSError, InputError):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return read_holder(lock_path)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
