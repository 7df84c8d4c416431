"""Signals held back while a commit runs, then delivered.

A commit of several files (the lock set) or of a journal must end as a whole: SIGINT, SIGTERM or
SIGHUP arriving in the middle would stop Python between two renames (SIGTERM's default action runs
no `finally`), leaving a mix of old and new files and the temporary ones. Inside
`with DeferredSignals():` those signals are recorded; when the block ends (committed, or rolled
back after an error) the previous handlers come back and each recorded signal is raised again, so
the process then stops exactly as it would have (lockguard's handlers raise Interrupted for all
three: lockguard/interrupts.py; a block's last step may set the state line that interrupt reports).

Python runs signal handlers in the main thread only; elsewhere nothing is deferred (the commit
runs as before). A commit that hangs (a stuck network file system) cannot be interrupted by these
signals; SIGKILL still ends it.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

DEFERRED = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class DeferredSignals:
    def __init__(self) -> None:
        self.received: list[int] = []
        # what signal.signal returned: a handler, SIG_DFL/SIG_IGN (ints), or None
        # (not set from Python)
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def __enter__(self) -> DeferredSignals:
        try:
            for signum in DEFERRED:
                self._previous[signum] = signal.signal(signum, self._record)
        except ValueError:  # not the main thread
            self._restore()
        return self

    def _record(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signum)

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._previous = {}

    def __exit__(self, *exc_info) -> None:
        self._restore()
        for signum in dict.fromkeys(self.received):
            signal.raise_signal(signum)
