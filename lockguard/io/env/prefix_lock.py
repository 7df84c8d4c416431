"""The kernel lock on an environment (io/kernel_lock.py), in its state folder: exclusive while
clean-install or restore changes it, shared while `check --env` or a dry run reads it. A second
run waits, saying for whom ("waiting for clean-install 20261201-120304-... (pid 4242) on .venv"),
or with --no-wait stops at once (exit 2). The holder names its run, so a journal whose run still
holds the lock is known to be live, never undone as interrupted; a lock left by a dead process is
the kernel's to drop, and is simply taken over."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from lockguard.errors import InputError, InstallFailed
from lockguard.io.env.state_folder import LOCK_FILE, check_state, state_folder
from lockguard.io.kernel_lock import Holder, held, live_holder
from lockguard.io.state_paths import make_folder


def lock_path(prefix: Path) -> Path:
    return state_folder(prefix) / LOCK_FILE


@contextlib.contextmanager
def locked_prefix(
    prefix: Path,
    command: str,
    *,
    exclusive: bool,
    run: str = "",
    wait: bool = True,
    on_wait: Callable[[str], None] | None = None,
    shown: str | None = None,
) -> Iterator[None]:
    """Hold the prefix's lock for the block, after checking its state folder (a link, a FIFO or a
    file where lockguard keeps its state is refused, exit 2, before anything changes). A reader
    of a prefix whose state folder it cannot create (another user's environment, a read-only file
    system) reads without the lock. A state folder this run made and left holding only the lock
    (a refusal, a read, a run with nothing to change) goes again as the lock is let go: a command
    that changed nothing leaves nothing."""
    state = state_folder(prefix)
    check_state(prefix)
    made = [False]

    def make() -> None:
        made[0] = make_folder(state) or made[0]

    try:
        make()
    except OSError as exc:
        if not exclusive:
            yield
            return
        cause = exc.strerror or str(exc)
        if exc.errno == 28:
            raise InstallFailed(
                f"cannot create {state}: {cause}; nothing was changed",
                hint="free some space on the environment's file system and run again",
            ) from None
        raise InputError(
            f"cannot create {state}: {cause}",
            file=str(state),
            hint=f"{command} changes the environment: run it as a user that owns it",
        ) from None
    holder = Holder(command, os.getpid(), run)

    def drop() -> None:
        """As the lock is let go (held exclusively): the folder this run made, if it holds only
        the lock; a run waiting for the lock then makes them again (held(), `reopen`)."""
        if made[0] and _only_the_lock(state):
            os.unlink(state / LOCK_FILE)
            os.rmdir(state)

    with held(
        lock_path(prefix),
        exclusive=exclusive,
        holder=holder,
        wait=wait,
        on_wait=on_wait,
        what=shown or str(prefix),
        reopen=make,
        drop=drop,
    ):
        check_state(prefix)  # again, under the lock: what the block reads is this
        yield


def _only_the_lock(state: Path) -> bool:
    try:
        return os.listdir(state) == [LOCK_FILE]
    except OSError:
        return False


def live_run(prefix: Path) -> Holder | None:
    """The run that holds the prefix's lock exclusively now, if it is another process."""
    holder = live_holder(lock_path(prefix))
    return holder if holder is not None and holder.pid != os.getpid() else None
