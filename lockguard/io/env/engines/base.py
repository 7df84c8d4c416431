"""What every install engine takes and gives (the interface the transaction calls)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class LockedFiles:
    """What to install: a requirements file of `name==version --hash=sha256:...` lines with the
    lock's index options (and a --find-links page of the lock's file URLs, for a pylock.toml)."""

    requirements: Path
    count: int
    # the environment also sees the base interpreter's site-packages (a --system-site-packages
    # venv): a copy there must not count as installed (the venv's own site is the environment)
    base_site: bool = False


@dataclass(frozen=True)
class InstallResult:
    engine: str
    output: str  # what the engine printed (stdout, then stderr), for the cause of a failure


@dataclass(frozen=True)
class EngineProgress:
    """`line`: each line the engine prints; `tick`: about four times a second while it runs (the
    caller watches the prefix: progress counted by effect)."""

    line: Callable[[str], None] = lambda _text: None
    tick: Callable[[], None] = lambda: None


class InstallEngine(Protocol):
    name: str
    flags: str  # as the plan names them: "--require-hashes --no-deps"
    # starts in milliseconds: the transaction runs it once per batch of downloads as they land
    # (install while the next files arrive); else once, after every download
    batches: bool

    def ready(self) -> str:
        """The engine's own version line; raises InputError (exit 2, nothing changed) if it cannot
        start on this machine."""
        ...

    def install(
        self,
        prefix: Path,
        python: str,
        locked: LockedFiles,
        *,
        deadline: float,
        progress: EngineProgress,
    ) -> InstallResult:
        """Install `locked` into `prefix` (whose interpreter is `python`) before `deadline` (a
        time.monotonic() value); raises InstallFailed with the engine's own words."""
        ...
