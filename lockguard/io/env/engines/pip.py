"""The pip engine (`clean-install --installer pip`): the target environment's own pip,
`pip install --no-deps --require-hashes -r FILE` of what the plan installs (the lock's own
entries, hashes and index options). pip never uninstalls anything: the transaction moved every
outgoing file away before, and kept a hard link of everything else.

An sdist is always built as a wheel in an isolated build environment (--use-pep517): older pips
otherwise build a setup.py project with the environment's own `wheel` and setuptools, which the
quarantine may have just taken apart (wheel 0.48 needs the packaging the lock downgrades), and fall
back to `setup.py install`, an .egg-info with no RECORD that nothing can verify or undo exactly.

In a --system-site-packages venv pip runs with --ignore-installed (the base interpreter holding
the locked version made pip say "Requirement already satisfied" and the run fail; uv looks at the
venv's own site only). pip runs with PYTHONNOUSERSITE=1 (a copy in the user site must neither
satisfy the lock nor be touched) and PYTHONDONTWRITEBYTECODE=1 (running pip must not add .pyc
files of pip itself to the prefix; the .pyc files pip compiles for what it installs are in their
RECORDs)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from lockguard.errors import InstallFailed
from lockguard.io.env.engines.base import EngineProgress, InstallResult, LockedFiles
from lockguard.io.run import Finished, run_bounded


def _env() -> dict:
    return {**os.environ, "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


class PipEngine:
    name = "pip"
    flags = "--require-hashes --no-deps"
    batches = False  # pip starts in ~0.5 s: one run after every download

    def ready(self) -> str:
        return "pip (the target environment's own)"

    def install(
        self,
        prefix: Path,
        python: str,
        locked: LockedFiles,
        *,
        deadline: float,
        progress: EngineProgress,
    ) -> InstallResult:
        done = install_lock(
            python,
            locked.requirements,
            ignore_installed=locked.base_site,
            timeout=max(deadline - time.monotonic(), 1.0),
            on_line=progress.line,
            tick=lambda _process: progress.tick(),
        )
        return InstallResult(self.name, done.stdout + done.stderr)


def install_lock(
    python: str,
    requirements: Path,
    *,
    timeout: float,
    on_line: Callable[[str], None] | None = None,
    tick: Callable | None = None,
    ignore_installed: bool = False,
) -> Finished:
    argv = [
        python,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--require-hashes",
        # a --system-site-packages venv: the base interpreter's copy of a locked version must
        # not count as installed (pip never touches it); the plan installs nothing the venv's
        # own site holds (the quarantine moved any other version out)
        *(["--ignore-installed"] if ignore_installed else []),
        "--use-pep517",
        "--no-warn-script-location",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        "-r",
        str(requirements),
    ]
    done = run_bounded(
        argv,
        timeout=timeout,
        env=_env(),
        on_line=on_line,
        tick=tick,
        cap=64 << 20,
        stderr_cap=64 << 20,
        die_with_lockguard=True,
    )
    if done.returncode is None:
        raise InstallFailed(f"cannot run {python} -m pip: {done.start_error}")
    if done.timed_out:
        raise InstallFailed(f"pip install did not finish within {timeout:.0f} s; pip was stopped")
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-12:]
        raise InstallFailed(
            f"pip install -r {requirements.name} failed (pip exit {done.returncode}):\n    "
            + "\n    ".join(tail),
            hint="fix the cause pip names and run clean-install again"
            + ("; the environment has no pip: run with --installer uv" if _no_pip(tail) else ""),
        )
    return done


def _no_pip(tail: list[str]) -> bool:
    return any("No module named pip" in line for line in tail)
