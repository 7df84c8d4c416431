"""Run the doctor's probe in the target interpreter; a crash, a hang or output that is not the
probe's protocol is a result, not an exception."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lockguard.io.run import run_bounded
from lockguard.model.probe import ProbeResult

PROBE = Path(__file__).resolve().parents[2] / "doctor" / "probe.py"
_KINDS = {"base": dict, "torch": dict, "imports": list, "importing": dict, "smoke": list}


def _is(*types):
    return lambda value: isinstance(value, types)


def _list_of(*types):
    return lambda value: isinstance(value, list) and all(isinstance(v, types) for v in value)


def _dict_of(keys, values):
    return lambda value: (
        isinstance(value, dict) and all(isinstance(k, keys) and values(v) for k, v in value.items())
    )


_STR, _OPT_STR, _NUM = _is(str), _is(str, type(None)), _is(int, float)
# the fields the checks read, with the shape the probe writes; anything else in a field is dropped
_SHAPES = {
    "base": {
        "python": _dict_of(str, _OPT_STR),
        "platform": _dict_of(str, _OPT_STR),
        "glibc": _OPT_STR,
        "distributions": _dict_of(str, _STR),
        "duplicates": _dict_of(str, _list_of(dict)),
        "environment": _dict_of(str, _STR),
    },
    "torch": {
        "state": _STR,
        "version": _STR,
        "installed": _OPT_STR,
        "file": _OPT_STR,
        "cuda": _OPT_STR,
        "cudnn": _is(int, type(None)),
        "cudnn_error": _STR,
        "cxx11_abi": _is(bool, type(None)),
        "cuda_available": _is(bool),
        "cuda_error": _STR,
        "arch_list": _list_of(str),
        "nccl": lambda v: v is None or _list_of(int, str)(v),
        "device_count": _is(int),
        "devices": _list_of(dict),
        "device_error": _STR,
        "mapped": _list_of(str),
        "mapped_versions": _dict_of(str, _is(int, list)),
    },
    "imports": {
        "dist": _STR,
        "module": _STR,
        "version": _OPT_STR,
        "dist_info": _STR,
        "state": _STR,
        "error": _STR,
        "traceback": _list_of(str),
        "missing_libraries": _list_of(str),
        "providers": _dict_of(str, _list_of(dict)),
    },
    "importing": {"dist": _STR, "module": _STR},
    "smoke": {"index": _is(int), "ok": _is(bool), "seconds": _NUM, "checksum": _NUM, "error": _STR},
}


def run_probe(
    python: str,
    *,
    smoke: bool = False,
    timeout: float = 60,
    env: dict | None = None,
    imports: tuple[tuple[str, str], ...] = (),
) -> ProbeResult:
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


_NOT_JSON = object()


def parse_output(result: ProbeResult, stdout: str) -> None:
    """Fill `result` from the probe's JSON lines; anything else is named in `result.problems`
    (the first few), never raised."""
    bad, noise = [], []
    noisy = 0  # lines that are not JSON; only the first few are described
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:  # a failed parse costs microseconds: a flood of 16 MiB of words took 20 s, so only
            # what may be a record (an object or a list) is parsed
            item = json.loads(line) if line.lstrip()[:1] in ("{", "[") else _NOT_JSON
        except (ValueError, RecursionError):
            item = _NOT_JSON
        if item is _NOT_JSON:
            noisy += 1
            if noisy <= 3:
                noise.append(f"line {number} is not JSON: {_shorten(line)}")
            continue
        kind = item.get("kind") if isinstance(item, dict) else None
        data = item.get("data") if isinstance(item, dict) else None
        if kind not in _KINDS or not isinstance(data, _KINDS[kind]):
            bad.append(f"line {number} is not a probe record: {_shorten(line)}")
            continue
        if kind in ("imports", "smoke"):
            data = [_conform(kind, i, number, bad) for i in data if isinstance(i, dict)]
        else:
            data = _conform(kind, data, number, bad)
        if kind == "base":
            result.base = data
        elif kind == "torch":
            result.torch = data
        elif kind == "importing":
            result.importing = data
        elif kind == "imports":
            result.imports = [i for i in data if "dist" in i and "module" in i]
            result.importing = None
        elif kind == "smoke":
            result.smoke = data
    result.problems += bad[:3] + ([f"and {len(bad) - 3} more lines"] if len(bad) > 3 else [])
    result.noise += noise + ([f"and {noisy - 3} more lines"] if noisy > 3 else [])
    if not result.base and not result.problems and not result.noise:
        result.problems.append(
            "it printed no facts" if not stdout.strip() else "its output held no facts"
        )


def _conform(kind: str, data: dict, number: int, bad: list[str]) -> dict:
    """`data` without the fields whose shape is not what the probe writes (each named in `bad`)."""
    shapes = _SHAPES[kind]
    wrong = sorted(k for k, v in data.items() if k in shapes and not shapes[k](v))
    if wrong:
        bad.append(f"line {number}: {kind} {', '.join(wrong)} of an unexpected type")
    return {k: v for k, v in data.items() if k not in wrong}


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
