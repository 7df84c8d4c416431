"""Install engines: what puts the lock's files into a prefix inside a clean-install's transaction.
The transaction has moved every outgoing file into the quarantine before an engine runs, and
verifies by effect after it (RECORD files, import smoke); an engine only installs the locked files
it is handed (hashes required, no dependency resolution: the lock is the resolution) and never
uninstalls anything. uv (the default, engines/uv.py) and pip (engines/pip.py) install Python
distributions; rattler (engines/rattler.py) installs a conda lock's records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lockguard.errors import InputError


@dataclass(frozen=True)
class LockedFiles:
    """What to install: a requirements file of `name==version --hash=sha256:...` lines with the
    lock's index options (and a --find-links page of the lock's file URLs, for a pylock.toml)."""

    requirements: Path
    count: int


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


INSTALLERS = ("uv", "pip")
DEFAULT_INSTALLER = "uv"


def engine_named(name: str) -> InstallEngine:
    if name == "uv":
        from lockguard.io.env.engines.uv import UvEngine

        return UvEngine()
    if name == "pip":
        from lockguard.io.env.engines.pip import PipEngine

        return PipEngine()
    raise InputError(
        f"--installer {name!r} is not an install engine",
        key="--installer",
        hint=f"one of: {', '.join(INSTALLERS)}",
    )


def run_engine(
    engine: InstallEngine,
    prefix: Path,
    python: str,
    locked: LockedFiles,
    *,
    deadline: float,
    progress: EngineProgress,
) -> InstallResult:
    """The one call the transaction makes into an engine (and the seam the fault tests stop)."""
    return engine.install(prefix, python, locked, deadline=deadline, progress=progress)
