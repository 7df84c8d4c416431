"""Run the target environment's own pip, in two steps: fetch the wheels of what the plan installs
(`pip wheel --no-deps --require-hashes`: wheels are copied from pip's cache or the index, sdists are
built once), then install exactly those files (`pip install --no-deps --require-hashes --no-index
--find-links`). Between the two, lockguard knows every path pip will write. pip never uninstalls
anything: the transaction moved every outgoing file away before.

pip runs with PYTHONNOUSERSITE=1 (a copy in the user site must neither satisfy the lock nor be
touched) and PYTHONDONTWRITEBYTECODE=1 (running pip must not add .pyc files of pip itself to the
prefix; the .pyc files pip compiles for what it installs are in their RECORDs)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from lockguard.errors import InstallFailed
from lockguard.io.env.bounded import Finished, run_bounded

PIP_TIMEOUT = 3600
# "Downloading torch-2.1.2-...whl (670.2 MB)" / "Using cached torch-2.1.2-...whl (670.2 MB)": a wheel
# file from an index (or pip's HTTP cache of it), checked against the lock's hashes. A wheel pip
# built from a hash-checked sdist (or took from its wheel cache: "Using cached x.whl", no size)
# has a hash the lock cannot know.
_FROM_INDEX = re.compile(r"^\s*(?:Downloading|Using cached)\s+(\S+\.whl)\s+\(")


def _env() -> dict:
    return {**os.environ, "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _pip(python: str, args: list[str], *, on_line: Callable[[str], None] | None = None,
         tick: Callable | None = None) -> Finished:
    argv = [python, "-m", "pip", *args, "--disable-pip-version-check", "--no-input", "--progress-bar", "off"]
    try:
        return run_bounded(argv, timeout=PIP_TIMEOUT, env=_env(), on_line=on_line, tick=tick, limit=64 << 20)
    except OSError as exc:
        raise InstallFailed(f"cannot run {python} -m pip: {exc.strerror or exc}") from None


def _failure(done: Finished, what: str, hint: str) -> InstallFailed:
    if done.timed_out:
        return InstallFailed(f"{what} did not finish within {PIP_TIMEOUT} s; pip was stopped", hint=hint)
    tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-12:]
    return InstallFailed(f"{what} failed (pip exit {done.returncode}):\n    " + "\n    ".join(tail), hint=hint)


def fetch_wheels(python: str, requirements: Path, dest: Path, on_line: Callable[[str], None] | None = None
                 ) -> set[str]:
    """Download (or build) the wheels into dest, every artifact checked against the lock's hashes.
    Returns the file names of the wheels that came from an index as they are (the others were
    built from a checked sdist; their own hash is not in the lock)."""
    indexed: set[str] = set()

    def line(text: str) -> None:
        match = _FROM_INDEX.match(text)
        if match:
            indexed.add(match.group(1).rsplit("/", 1)[-1])
        if on_line is not None:
            on_line(text)

    done = _pip(python, ["wheel", "--no-deps", "--require-hashes", "-r", str(requirements), "-w", str(dest)],
                on_line=line)
    if done.returncode != 0 or done.timed_out:
        raise _failure(done, f"pip could not fetch the packages of {requirements.name}",
                       "nothing in the environment was changed; fix the cause and run clean-install again")
    return indexed


def install_wheels(python: str, requirements: Path, wheels: Path, *, tick: Callable | None = None) -> Finished:
    done = _pip(python, ["install", "--no-deps", "--require-hashes", "--no-index", "--find-links", str(wheels),
                         "--no-warn-script-location", "-r", str(requirements)], tick=tick)
    if done.returncode != 0 or done.timed_out:
        raise _failure(done, f"pip install of {requirements.name}", "fix the cause pip names and run clean-install again")
    return done
