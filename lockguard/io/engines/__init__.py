"""Cluster engines for `lockguard fleet run`: one adapter module per engine (ray_engine, slurm,
clush, kubectl), each running the node script (lockguard.fleet.node_protocol) on every node at
once and handing back one NodeOutput per node; report_files reads and writes the per-node files."""

from __future__ import annotations

import importlib
import shutil
from types import ModuleType

from lockguard.errors import InputError


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
