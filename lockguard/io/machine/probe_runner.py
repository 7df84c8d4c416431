"""Run the doctor's probe in the target interpreter; a crash is a result, not an exception."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lockguard.model.probe import ProbeResult

PROBE = Path(__file__).resolve().parents[2] / "doctor" / "probe.py"


def run_probe(python: str, *, smoke: bool = False, timeout: int = 300, env: dict | None = None) -> ProbeResult:
    argv = [python, "-I", str(PROBE)] + (["--smoke"] if smoke else [])
    result = ProbeResult(python)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        result.returncode = 124
        result.stderr_tail = f"the probe did not finish within {timeout} s"
        _parse(result, exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or "")
        return result
    except OSError as exc:
        result.returncode = 127
        result.stderr_tail = str(exc)
        return result
    result.returncode = done.returncode
    result.stderr_tail = "\n".join(done.stderr.strip().splitlines()[-15:])
    _parse(result, done.stdout)
    return result


def _parse(result: ProbeResult, stdout: str) -> None:
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item.get("kind") == "base":
            result.base = item["data"]
        elif item.get("kind") == "torch":
            result.torch = item["data"]
        elif item.get("kind") == "smoke":
            result.smoke = item["data"]


def pid_alive(pid: int) -> bool | None:
    """True/False for a process this machine can see; None when it cannot tell (another PID
    namespace, as in containers, where NVML reports host PIDs)."""
    import os

    if os.path.exists(f"/proc/{pid}"):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
