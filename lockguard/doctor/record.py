"""The per-node doctor record (`lockguard doctor --json`): what `lockguard fleet report` merges.

Layout version DOCTOR_SCHEMA (README, "The doctor's JSON record"). `drift` holds, under stable flat
keys, every column of a fleet's drift table, already derived; `fingerprint` is the sha256 of the
FINGERPRINT_KEYS of `drift` plus the installed distributions: nodes with equal fingerprints are
alike in everything that must agree across a fleet. Pure: facts in, a JSON-ready dict out.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence

from lockguard.doctor.check import Check, Facts
from lockguard.doctor.checks_system import jit_toolkit, wheel_owned
from lockguard.model.json_types import JsonObject
from lockguard.model.system_facts import decode_library_version
from lockguard.model.target import MachineFacts

DOCTOR_SCHEMA = 1

# drift keys that must agree across a fleet (with the installed distributions): the fingerprint's
# input
FINGERPRINT_KEYS = (
    "driver",
    "gpu_models",
    "gpu_archs",
    "python",
    "torch",
    "torch_cuda",
    "cudart",
    "cudart_origin",
    "cudnn",
    "cudnn_origin",
    "nccl",
    "nccl_origin",
    "usr_local_cuda_version",
    "nvcc",
    "lock_body_hash",
)
_LIBS = (("cudart", "libcudart.so"), ("cudnn", "libcudnn.so"), ("nccl", "libnccl.so"))


def node_record(
    facts: Facts,
    checks: Sequence[Check],
    *,
    node: str,
    node_source: str,
    time: str,
    version: str,
    exit_code: int,
    lock_meta: Mapping[str, object] | None,
) -> JsonObject:
    dists = facts.dists
    drift = drift_columns(facts, checks, lock_meta)
    # every installed dist-info: two of one name in one folder are both listed
    distributions = sorted(
        {f"{name}=={dists[name]}" for name in dists}
        | {f"{name}=={c['version']}" for name, copies in facts.duplicates.items() for c in copies}
    )
    probe = facts.probe
    base = probe.base
    return {
        "doctor_schema": DOCTOR_SCHEMA,
        "node": node,
        "node_source": node_source,
        "time": time,
        "lockguard": version,
        "python": probe.python,
        "exit_code": exit_code,
        "fingerprint": fingerprint(drift, distributions),
        "fingerprint_keys": list(FINGERPRINT_KEYS) + ["distributions"],
        "drift": drift,
        "facts": {
            "nvml": nvml_dict(facts.machine),
            "system": facts.system.to_dict(),
            "environment": {
                "python": base.get("python"),
                "platform": base.get("platform"),
                "glibc": base.get("glibc"),
                "variables": base.get("environment") or {},
            },
            "torch": probe.torch,
            "imports": probe.imports,
            "smoke": probe.smoke,
            "probe": {
                "returncode": probe.returncode,
                "timed_out": probe.timed_out,
                "problems": probe.problems,
                "stderr_tail": probe.stderr_tail,
            },
        },
        "lock": dict(lock_meta) if lock_meta is not None else None,
        "lock_reason": None if facts.lock else facts.lock_reason,
        "distributions": distributions,
        "checks": [c.to_dict() for c in checks],
        "findings": [c.finding.to_dict() for c in checks if c.finding],
    }


def fingerprint(drift: JsonObject, distributions: list[str]) -> str:
    body = {key: drift.get(key) for key in FINGERPRINT_KEYS}
    body["distributions"] = distributions
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def drift_columns(
    facts: Facts, checks: Sequence[Check], lock_meta: Mapping[str, object] | None
) -> JsonObject:
    machine, system, torch = facts.machine, facts.system, facts.torch
    models = Counter(g.name for g in machine.gpus)
    local = system.toolkit("/usr/local/cuda")
    jit = jit_toolkit(facts)
    first_nvcc = system.nvcc[0] if system.nvcc else None
    version = torch.get("version") if torch else (facts.probe.torch or {}).get("installed")
    home = system.toolkit("CUDA_HOME") or system.toolkit("CUDA_PATH")
    columns = {
        "driver": str(machine.driver) if machine.driver else None,
        "cuda_driver_max": str(machine.cuda_max) if machine.cuda_max else None,
        "gpu_count": len(machine.gpus),
        "gpu_models": [f"{count}x {name}" for name, count in sorted(models.items())],
        "gpu_archs": sorted({str(g.arch) for g in machine.gpus}),
        "python": (facts.probe.base.get("python") or {}).get("version")
        if isinstance(facts.probe.base.get("python"), dict)
        else None,
        "torch": version,
        "torch_local": version.split("+", 1)[1]
        if isinstance(version, str) and "+" in version
        else None,
        "torch_state": facts.torch_state,
        "torch_cuda": torch.get("cuda") if torch else None,
        "usr_local_cuda": local.target if local else None,
        "usr_local_cuda_version": local.version if local else None,
        "cuda_home": home.path if home else None,
        "jit_cuda": jit.version if jit else None,
        "nvcc": first_nvcc.version if first_nvcc else None,
        "nvcc_path": first_nvcc.path if first_nvcc else None,
    }
    for family, prefix in _LIBS:
        columns.update(_library_columns(facts, family, prefix))
    columns["dev_shm_bytes"] = system.dev_shm_bytes
    columns["lock_body_hash"] = lock_meta.get("body_hash") if lock_meta else None
    columns["findings"] = sorted(
        f"{c.finding.code} {c.finding.severity}"
        for c in checks
        if c.finding and c.status in ("error", "warn")
    )
    columns["errors"] = sum(c.status == "error" for c in checks)
    columns["warnings"] = sum(c.status == "warn" for c in checks)
    return columns


def _library_columns(facts: Facts, family: str, prefix: str) -> JsonObject:
    """`family`, `family_how` (loaded | reachable), `family_from` (the file), `family_origin`
    (wheel | system)."""
    torch = facts.torch
    version = path = how = None
    mapped = [
        p
        for p in torch.get("mapped") or []
        if p.rsplit("/", 1)[-1].startswith(prefix + ".") or p.endswith("/" + prefix)
    ]
    if mapped:
        path, how = mapped[0], "loaded"
        code = (torch.get("mapped_versions") or {}).get(path)
        version = decode_library_version(family, code) if code is not None else None
        # torch.backends.cudnn.version() asks the loaded library; torch.cuda.nccl.version() is the
        # NCCL torch was built with, not the one loaded, so it never stands in here
        if version is None and family == "cudnn" and isinstance(torch.get("cudnn"), int):
            version = decode_library_version("cudnn", torch["cudnn"])
    else:
        lib = next((lib for lib in facts.system.libraries if lib.family == family), None)
        if lib:
            path, how, version = lib.path, "reachable", lib.version
    origin = None if path is None else "wheel" if wheel_owned(path) else "system"
    return {
        family: version,
        f"{family}_how": how,
        f"{family}_from": path,
        f"{family}_origin": origin,
    }


def nvml_dict(machine: MachineFacts) -> JsonObject:
    return {
        "driver": str(machine.driver) if machine.driver else None,
        "cuda_max": str(machine.cuda_max) if machine.cuda_max else None,
        "problem": machine.problem,
        "overridden": list(machine.overridden),
        "gpus": [
            {
                "index": g.index,
                "name": g.name,
                "arch": str(g.arch),
                "memory_total": g.memory_total,
                "memory_used": g.memory_used,
                "mig": g.mig,
                "uuid": g.uuid,
                "processes": [
                    {"pid": p.pid, "used_memory": p.used_memory, "name": p.name}
                    for p in g.processes
                ],
            }
            for g in machine.gpus
        ],
    }
