"""LG311: the probe itself, and the GPU packages doctor imports. An installed package whose import
fails is an error with the exception, the traceback's tail and the fix: for a shared library that
cannot be opened, the distribution that should provide it, from the installed RECORDs and the lock.
No distribution is a skip with that reason."""

from __future__ import annotations

import re
from typing import Any

from lockguard.doctor.check import Check, Facts, flag, ok, skip
from lockguard.model import codes
from lockguard.model.finding import WARNING
from lockguard.model.json_types import JsonObject

# The GPU packages doctor imports when they are installed (distribution, module), torch first.
# Each loads native CUDA code at import. Left out: DeepSpeed (its import takes seconds, and its CUDA
# ops are built later: LG304 judges the nvcc they will use) and triton (in every torch environment,
# its import costs about a second, and it fails only when torch.compile runs).
GPU_IMPORTS = (
    ("torch", "torch"),
    ("torchvision", "torchvision"),
    ("torchaudio", "torchaudio"),
    ("flash-attn", "flash_attn"),
    ("xformers", "xformers"),
    ("bitsandbytes", "bitsandbytes"),
)

# The pip wheel family that ships a CUDA library, by the library's stem
# (libcudnn_ops_infer.so.8 -> cudnn).
_WHEEL_OF_STEM = {
    "cudnn": "nvidia-cudnn-",
    "nccl": "nvidia-nccl-",
    "cublasLt": "nvidia-cublas-",
    "cublas": "nvidia-cublas-",
    "cudart": "nvidia-cuda-runtime-",
    "nvrtc": "nvidia-cuda-nvrtc-",
    "cupti": "nvidia-cuda-cupti-",
    "cufft": "nvidia-cufft-",
    "curand": "nvidia-curand-",
    "cusolver": "nvidia-cusolver-",
    "cusparseLt": "nvidia-cusparselt-",
    "cusparse": "nvidia-cusparse-",
    "nvJitLink": "nvidia-nvjitlink-",
    "nvToolsExt": "nvidia-nvtx-",
}
_STEM = re.compile(
    r"^lib("
    + "|".join(sorted(_WHEEL_OF_STEM, key=len, reverse=True))
    + r")(?:_[A-Za-z0-9_]+)?\.so\.?(\d*)"
)
TAIL = 8  # traceback / stderr lines shown as evidence


def import_checks(facts: Facts) -> list[Check]:
    probe = facts.probe
    checks = [_probe_check(facts)]
    results = {r.get("dist"): r for r in probe.imports if isinstance(r.get("dist"), str)}
    if facts.torch_state == "missing":
        checks.append(
            skip(
                codes.IMPORT_FAILS.code, "import torch", "no torch distribution in this environment"
            )
        )
    checks += [_import_check(facts, result) for result in results.values()]
    return checks


def _probe_check(facts: Facts) -> Check:
    probe = facts.probe
    title = "probe"
    stderr = tuple(probe.stderr_tail.splitlines()[-TAIL:])
    crashed = probe.crashed
    if crashed and probe.importing:
        module = probe.importing.get("module")
        dist = probe.importing.get("dist")
        version = facts.dists.get(str(dist))
        installed = f"{dist} {version}" if version else str(dist)
        if probe.timed_out:
            return flag(
                codes.IMPORT_FAILS,
                f"import {module}",
                f"{installed} is installed but `import {module}` hangs: "
                f"{'; '.join(probe.problems)}",
                f"run `{probe.python} -c 'import {module}'` to see where it waits "
                "(a network filesystem, a lock file, a GPU that does not answer); give it longer "
                "with --timeout SECONDS",
                stderr,
            )
        last = stderr[-1] if stderr else "no stderr"
        return flag(
            codes.IMPORT_FAILS,
            f"import {module}",
            f"{installed} is installed but `import {module}` killed the probe ({crashed}); "
            f"stderr: {last}",
            f"run `{probe.python} -c 'import {module}'` to see the crash; a crash on import "
            "usually means stale .so files or a library shadowed by LD_LIBRARY_PATH "
            "(`lockguard check --env`)",
            stderr,
        )
    if crashed:
        what = "; ".join(probe.problems + probe.noise) or f"it ended with {crashed}"
        return flag(
            codes.IMPORT_FAILS,
            title,
            f"the probe in {probe.python} failed: {what}",
            f"check that {probe.python} is the environment's Python interpreter (its bin/python); "
            f"run `{probe.python} -c 'import sys; print(sys.version)'`"
            + ("; give it longer with --timeout SECONDS" if probe.timed_out else ""),
            stderr,
        )
    if probe.torch is None:
        return flag(
            codes.IMPORT_FAILS,
            title,
            f"the probe in {probe.python} stopped before it reported torch",
            f"run `{probe.python} -c 'import torch'` in that environment",
            stderr,
        )
    version = (
        (probe.base.get("python") or {}).get("version")
        if isinstance(probe.base.get("python"), dict)
        else None
    )
    if probe.noise:
        return flag(
            codes.IMPORT_FAILS,
            title,
            f"python {version} at {probe.python} also printed lines that are not the probe's: "
            f"{'; '.join(probe.noise)}",
            "something in the environment writes to stdout at start-up "
            "(a .pth file or sitecustomize)",
            stderr,
            severity=WARNING,
        )
    return ok(codes.IMPORT_FAILS.code, title, f"python {version} at {probe.python}")


def _import_check(facts: Facts, result: JsonObject) -> Check:
    dist, module = result.get("dist"), result.get("module")
    version = result.get("version") or facts.dists.get(str(dist)) or "?"
    title = f"import {module}"
    state = result.get("state")
    if state == "ok":
        return ok(codes.IMPORT_FAILS.code, title, f"{dist} {version}")
    if state == "not tried":
        return skip(codes.IMPORT_FAILS.code, title, "torch fails to import, and it needs torch")
    error = str(result.get("error") or "no error text")
    trace = tuple(str(line) for line in (result.get("traceback") or [])[-TAIL:])
    stderr = tuple(facts.probe.stderr_tail.splitlines()[-TAIL:])
    fixes = [
        _provider_fix(facts, lib, result.get("providers", {}).get(lib) or [])
        for lib in result.get("missing_libraries") or []
    ]
    hint = (
        " ".join(fixes)
        if fixes
        else (
            f"run `{facts.probe.python} -c 'import {module}'`; an undefined symbol means a "
            "library of another version was loaded first (LD_LIBRARY_PATH, stale files: "
            "`lockguard check --env`)"
        )
    )
    return flag(
        codes.IMPORT_FAILS,
        title,
        f"{dist} {version} is installed but `import {module}` fails: {error}",
        hint,
        trace + tuple(f"stderr: {line}" for line in stderr),
    )


def _provider_fix(facts: Facts, library: str, providers: list[Any]) -> str:
    """Which distribution should provide `library`, as a fix: an installed RECORD that lists it,
    joined with the lock's pin; else the lock's wheel of that library's family."""
    lock = facts.lock.pip if facts.lock else {}
    listed = [p for p in providers if isinstance(p, dict) and isinstance(p.get("dist"), str)]
    for item in sorted(listed, key=lambda p: (p["dist"] not in lock, p["dist"])):
        dist = item["dist"]
        pin = lock.get(dist)
        who = (
            f"{dist} {pin} (locked)"
            if pin
            else f"{dist} {item.get('version')} (installed; not in the lock)"
            if lock
            else f"{dist} {item.get('version')}"
        )
        if item.get("present"):
            return (
                f"{library} is {item.get('file')} of {who}: the file is there but the loader "
                "does not find it (a moved environment, or LD_LIBRARY_PATH): "
                "`lockguard check --env`."
            )
        return (
            f"{library} belongs to {who}, whose RECORD lists {item.get('file')}, but the file "
            f"is missing: reinstall it with {facts.clean_install}, or "
            f"`pip install --force-reinstall --no-deps {dist}=={pin or item.get('version')}`."
        )
    match = _STEM.match(library)
    if match:
        prefix, major = _WHEEL_OF_STEM[match.group(1)], match.group(2)
        for dist, pin in sorted(lock.items()):
            if dist.startswith(prefix) and (not major or pin.split(".")[0] == major):
                return (
                    f"{library} comes from the lock's {dist} {pin}, which is not installed: "
                    f"{facts.clean_install}"
                    f" (or `pip install --no-deps {dist}=={pin}`)."
                )
    if lock:
        return (
            f"{library}: no locked or installed distribution provides it; the lock expects it "
            "from the system."
        )
    return (
        f"{library}: no installed distribution lists it in its RECORD; with a lock (--intent) "
        "doctor names the distribution that should provide it."
    )
