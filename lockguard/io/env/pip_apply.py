"""Run the target environment's own pip: install the lock with hashes, uninstall the extras.

pip runs with PYTHONNOUSERSITE=1: a copy in the user site must neither satisfy the lock (the
environment itself has to hold it) nor be uninstalled (it is outside the prefix)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lockguard.errors import InstallFailed


def _pip(python: str, args: list[str], what: str) -> str:
    try:
        done = subprocess.run([python, "-m", "pip", *args, "--disable-pip-version-check", "--no-input"],
                              capture_output=True, text=True, timeout=3600,
                              env={**os.environ, "PYTHONNOUSERSITE": "1"})
    except OSError as exc:
        raise InstallFailed(f"cannot run {python} -m pip: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        raise InstallFailed(f"{what} failed (pip exit {done.returncode}):\n    " + "\n    ".join(tail),
                            hint="the quarantine was put back; fix the cause and run clean-install again")
    return done.stdout


def install_lock(python: str, requirements: Path) -> str:
    return _pip(python, ["install", "--no-deps", "--require-hashes", "-r", str(requirements)],
                f"pip install -r {requirements.name}")


def uninstall(python: str, names: list[str]) -> str:
    if not names:
        return ""
    return _pip(python, ["uninstall", "-y", *names], "pip uninstall " + " ".join(names))
