"""The test side of the fault seam (tests/support/fault_plugin/sitecustomize.py): the environment
that makes a lockguard child process fail, die or pause at a named function, and the handshake with
a paused child, so a race between two runs is certain rather than timed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

PLUGIN = Path(__file__).resolve().parent / "fault_plugin"


def fault_env(*faults: dict, base: dict | None = None) -> dict:
    """Environment variables for a child lockguard run with `faults` injected."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGIN), env.get("PYTHONPATH", "")]))
    env["LOCKGUARD_TEST_FAULTS"] = json.dumps(list(faults))
    return env


def wait_paused(folder: Path, name: str = "fault", timeout: float = 60.0, process=None) -> int:
    """Wait until a child paused at fault `name`; its pid. Fails early if `process` has ended."""
    marker = Path(folder) / f"paused-{name}"
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if process is not None and process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(
                f"the child ended (exit {process.returncode}) before pausing:\n{out}\n{err}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"no child paused at {name} within {timeout} s")
        time.sleep(0.02)
    return int(marker.read_text() or 0)


def release(folder: Path, name: str = "fault") -> None:
    (Path(folder) / f"go-{name}").write_text("go")
