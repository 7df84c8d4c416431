"""Run the doctor's probe in the target interpreter; a crash, a hang or output that is not the
probe's protocol is a result, not an exception."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lockguard.io.machine.bounded_run import run_bounded
from lockguard.model.probe import ProbeResult

PROBE = Path(__file__).resolve().parents[2] / "doctor" / "probe.py"
_KINDS = {"base": dict, "torch": dict, "imports": list, "importing": dict, "smoke": list}


def run_probe(python: str, *, smoke: bool = False, timeout: float = 60, env: dict | None = None,
              imports: tuple[tuple[str, str], ...] = ()) -> ProbeResult:
    argv = [python, "-I", str(PROBE)] + (["--smoke"] if smoke else [])
    for dist, module in imports:
        argv += ["--import", f"{dist}={module}"]
    done = run_bounded(argv, timeout=timeout, env=env, what=f"the probe ({python})")
    result = ProbeResult(python)
    if done.returncode is None:
        result.returncode = 127
        result.stderr_tail = done.problem or ""
        result.problems.append(done.problem or f"cannot run {python}")
        return result
    result.returncode = done.returncode
    result.timed_out = done.timed_out
    result.stderr_tail = "\n".join(done.stderr.strip().splitlines()[-15:])
    if done.problem:
        result.problems.append(done.problem)
    parse_output(result, done.stdout)
    return result


def parse_output(result: ProbeResult, stdout: str) -> None:
    """Fill `result` from the probe's JSON lines; anything else is named in `result.problems`
    (the first few), never raised."""
    bad = []
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            bad.append(f"line {number} is not JSON: {_shorten(line)}")
            continue
        kind = item.get("kind") if isinstance(item, dict) else None
        data = item.get("data") if isinstance(item, dict) else None
        if kind not in _KINDS or not isinstance(data, _KINDS[kind]):
            bad.append(f"line {number} is not a probe record: {_shorten(line)}")
            continue
        if kind == "base":
            result.base = data
        elif kind == "torch":
            result.torch = data
        elif kind == "importing":
            result.importing = data
        elif kind == "imports":
            result.imports = [i for i in data if isinstance(i, dict)]
            result.importing = None
        elif kind == "smoke":
            result.smoke = [i for i in data if isinstance(i, dict)]
    if bad:
        result.problems += bad[:3] + ([f"and {len(bad) - 3} more lines"] if len(bad) > 3 else [])
    if not result.base and not result.problems:
        result.problems.append("it printed no facts" if not stdout.strip() else "its output held no facts")


def _shorten(text: str, width: int = 80) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[:width] + "...")


def pid_alive(pid: int) -> bool | None:
    """True/False for a process this machine can see; None when it cannot tell (another PID
    namespace, as in containers, where NVML reports host PIDs)."""
    if os.path.exists(f"/proc/{pid}"):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
