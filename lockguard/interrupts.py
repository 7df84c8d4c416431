"""How every command ends on SIGINT, SIGTERM or SIGHUP: exit 130 and one line on stderr saying
what state the prefix or project is in and the command that finishes or undoes it; never a
traceback.

All three raise `Interrupted`, a KeyboardInterrupt: every `finally` runs, the kernel locks are let
go and a clean-install rolls back, where SIGTERM's default action would stop the process between
two steps. SIGINT too, rather than Python's own KeyboardInterrupt: a plain KeyboardInterrupt that
lands inside an exec() of generated code (dataclasses make their methods so) marks the interpreter
to kill itself by SIGINT at exit, even when it was caught, and the exit code would be -2, not 130.
A signal its parent set to be ignored stays ignored (`nohup` ignores SIGHUP; a background job of a
script ignores SIGINT).
io/deferred_signals.py still holds all three back while a commit runs (a commit ends as a whole).

A session says where it stands as it goes (`now`): a line, or a function that works it out when
the interrupt comes (restore counts the files back). cli/boundary.py prints it. Until a session
says otherwise a command has changed nothing: the read-only commands never set one.

Only the standard library's `signal` and `sys` are imported here: lockguard/start.py installs the
handlers before anything heavier loads.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

NOTHING_CHANGED = "interrupted; nothing was changed"
ALL = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

Handlers = dict  # signal number -> the handler it had (what signal.signal returned)


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP, raised where the main thread was."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def _deliver_later(unraisable: sys.UnraisableHookArgs) -> None:
    """Python cannot raise out of a weakref callback or a finaliser: an Interrupted that lands in
    one (the import system's module-lock callback, mid start-up) would be printed as "Exception
    ignored" with a traceback, and the interrupt lost. Send the signal again instead, from a
    thread that waits until this hook has let go: sent from here, the handler would run at once,
    inside the hook; sent after, the main thread's handler runs outside the callback."""
    exc = unraisable.exc_value
    if not (isinstance(exc, Interrupted) and signal.getsignal(exc.signum) is _raise):
        _hook_before[0](unraisable)
        return
    import os
    import threading

    hook_done = threading.Lock()
    hook_done.acquire()

    def send_again() -> None:
        with hook_done:
            os.kill(os.getpid(), exc.signum)

    threading.Thread(target=send_again, daemon=True).start()
    hook_done.release()


_hook_before = [sys.unraisablehook]


def raise_on_signals() -> Handlers:
    """The three signals raise Interrupted from now on (unless ignored by the parent); the
    handlers they had, for `put_back`. Outside the main thread: nothing changes."""
    if sys.unraisablehook is not _deliver_later:
        _hook_before[0] = sys.unraisablehook
        sys.unraisablehook = _deliver_later
    previous: Handlers = {}
    try:
        for signum in ALL:
            current = signal.getsignal(signum)
            if current == signal.SIG_IGN or current is _raise:
                continue
            previous[signum] = signal.signal(signum, _raise)
    except ValueError:  # not the main thread
        pass
    return previous


def ignore_signals() -> Handlers:
    """Further interrupts are ignored (the command is reporting one, or has ended): a second
    Ctrl-C must not cut the report short with a traceback. The handlers they had."""
    previous: Handlers = {}
    try:
        for signum in ALL:
            previous[signum] = signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass
    return previous


def put_back(previous: Handlers) -> None:
    """The handlers as they were (for a command run in-process, by the tests)."""
    try:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
    except ValueError:  # not the main thread
        pass


# -- the state line ------------------------------------------------------------------------------

_state: list[str | Callable[[], str]] = [NOTHING_CHANGED]


def now(line: str | Callable[[], str]) -> None:
    """Where the command stands, as an interrupt now would report it: "interrupted ..." naming the
    prefix or project and the command that finishes or undoes it; or a function that says it."""
    _state[0] = line


def state_line() -> str:
    """The line for an interrupt now. A function that cannot say (a damaged journal) gives way to
    the plain word."""
    line = _state[0]
    if callable(line):
        try:
            return line()
        except Exception:  # the report of an interrupt never fails
            return "interrupted"
    return line
