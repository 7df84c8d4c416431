"""Cluster engines for `lockguard fleet run`: one adapter module per engine (ray_engine, slurm,
clush, kubectl), each running the node script (lockguard.fleet.node_protocol) on every node at
once and handing back one NodeOutput per node; report_files reads and writes the per-node files.
An engine that refuses the request or cannot be reached says so in its own words (EngineRefused,
EngineDown), quoted under lockguard's message."""

from __future__ import annotations

import importlib
import shutil
from types import ModuleType

from lockguard.errors import EngineUnreachable, InputError


def require(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or say which extra installs it (exit 2)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f"--via {extra} needs {module.split('.')[0]}, which is not installed ({exc})",
            hint=f"pip install 'lockguard[{extra}]'",
        ) from exc


def require_program(name: str, engine: str, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InputError(f"--via {engine} runs {name}, and there is no {name} on PATH", hint=hint)
    return found


class EngineRefused(InputError):
    """The engine refused the request as the options built it (exit 2); `said`: its own lines."""

    def __init__(
        self, message: str, *, said: list[str], key: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, key=key, hint=hint)
        self.said = list(said)

    def details(self) -> list[str]:
        return self.said

    def to_dict(self) -> dict:
        return {**super().to_dict(), "said": self.said}


class EngineDown(EngineUnreachable):
    """The engine cannot be reached or cannot run the job (exit 4); `said`: its own lines."""

    def __init__(self, message: str, *, said: list[str], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.said = list(said)

    def details(self) -> list[str]:
        return self.said

    def to_dict(self) -> dict:
        return {**super().to_dict(), "said": self.said}
