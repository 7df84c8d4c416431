"""The answer to a command line that an identical earlier `lockguard check` gave, before click or
the rules are imported: `lockguard check` runs on every commit, and most commits change none of
the files it reads. The command line is only a key (io/project/check_cache.py); the earlier run's
entry says which project's lock set to hold, shared, while its files are compared, so that a
resolve writing the lock files is waited for (or refused, as that run would have been)."""

from __future__ import annotations

import sys

from lockguard.io.project.check_cache import CheckResults, Remembered


def earlier_check(argv: list[str]) -> Remembered | None:
    """An earlier check of this very command line, or None (then the command runs)."""
    if not argv:
        return None
    return CheckResults(argv).lookup()


def replay(earlier: Remembered, *, on_wait, warn) -> int | None:
    """Print the earlier output again and return its exit code, when every file it read holds the
    same bytes; None when one changed (the command then runs)."""
    from lockguard.io.project.lock_set import LockSet

    with LockSet(
        earlier.lock_folder,
        exclusive=False,
        command="check",
        wait=earlier.wait,
        on_wait=on_wait,
        warn=warn,
    ):
        if not earlier.current():
            return None
        sys.stdout.write(earlier.output)
        return earlier.code
