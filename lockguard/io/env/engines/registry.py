"""The install engines by name (`clean-install --installer`), and the one call the transaction
makes into an engine."""

from __future__ import annotations

from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.env.engines.base import EngineProgress, InstallEngine, InstallResult, LockedFiles
from lockguard.io.env.engines.pip import PipEngine
from lockguard.io.env.engines.uv import UvEngine

INSTALLERS = ("uv", "pip")
DEFAULT_INSTALLER = "uv"


def engine_named(name: str) -> InstallEngine:
    if name == "uv":
        return UvEngine()
    if name == "pip":
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
