"""The doctor's text report: the facts first (each with its source), then one line per check
(ok / warn / error / skip), then the fixes."""

from __future__ import annotations

from collections.abc import Sequence

from lockguard.doctor.check import Check, Facts
from lockguard.model.wording import counted

MARK = {"ok": "ok   ", "warn": "warn ", "error": "error", "skip": "skip "}
GIB = 1 << 30


def fact_lines(facts: Facts) -> list[tuple[str, str]]:
    machine, system = facts.machine, facts.system
    rows = [
        (
            "driver",
            f"{machine.driver}, CUDA up to {machine.cuda_max or '-'} (NVML)"
            if machine.driver
            else machine.problem or "no NVIDIA driver",
        )
    ]
    rows.append(
        (
            "GPUs",
            ", ".join(f"{g.index}: {g.name} ({g.arch})" for g in machine.gpus) or "none visible",
        )
    )
    for toolkit in system.toolkits:
        if toolkit.target is None:
            rows.append((toolkit.via, f"{toolkit.path} does not exist"))
            continue
        where = (
            f"-> {toolkit.target}"
            if toolkit.via == "/usr/local/cuda"
            else toolkit.path + (f" -> {toolkit.target}" if toolkit.target != toolkit.path else "")
        )
        version = (
            f"CUDA {toolkit.version} ({toolkit.version_source})"
            if toolkit.version
            else "version unreadable"
        )
        rows.append((toolkit.via, f"{where}: {version}"))
    if not system.toolkit("/usr/local/cuda"):
        rows.append(("/usr/local/cuda", "absent"))
    for key in ("CUDA_HOME", "CUDA_PATH"):
        if not system.toolkit(key):
            rows.append((key, "unset"))
    for index, nvcc in enumerate(system.nvcc):
        note = " (first on PATH)" if index == 0 and len(system.nvcc) > 1 else ""
        rows.append(("nvcc", f"{nvcc.path}: {nvcc.version or nvcc.problem}{note}"))
    if not system.nvcc:
        rows.append(("nvcc", "none on PATH"))
    for lib in system.libraries:
        soname = f"SONAME {lib.soname}" if lib.soname else "no SONAME"
        version = f"{lib.version} ({lib.version_source})" if lib.version else "version unknown"
        rows.append((f"lib{lib.family}", f"{lib.path}: {version}, {soname}, via {lib.via}"))
    if not system.libraries:
        rows.append(
            (
                "libraries",
                "no CUDA, cuDNN, NCCL or cuBLAS library reachable outside the environment",
            )
        )
    rows.append(
        (
            "gcc",
            f"{system.gcc.version or 'version unknown'} ({system.gcc.path})"
            if system.gcc
            else "none on PATH",
        )
    )
    rows.append(
        (
            "/dev/shm",
            f"{system.dev_shm_bytes / GIB:.1f} GiB"
            if system.dev_shm_bytes is not None
            else "absent",
        )
    )
    rows.append(("torch", _torch_line(facts)))
    rows += [("note", problem) for problem in system.problems]
    return rows


def _torch_line(facts: Facts) -> str:
    state = facts.torch_state
    if state == "ok":
        torch = facts.torch
        return f"{torch.get('version')} (CUDA {torch.get('cuda') or 'none: a CPU build'})"
    if state == "broken":
        return f"{(facts.probe.torch or {}).get('installed') or '?'} installed, fails to import"
    if state == "missing":
        return "not installed (no torch distribution in this environment)"
    return "unknown (the probe failed)"


def text(facts: Facts, checks: Sequence[Check], *, header: str) -> str:
    lines = [header, "facts:"]
    rows = fact_lines(facts)
    width = max(len(label) for label, _ in rows)
    lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
    lines.append("checks:")
    width = max(len(c.title) for c in checks) if checks else 0
    for check in checks:
        lines.append(f"  {MARK[check.status]}  {check.title.ljust(width)}  {check.detail}")
        if check.status in ("error", "warn"):
            lines += [f"  {' ' * (len(MARK['ok']) + width + 4)}| {line}" for line in check.evidence]
    problems = [(c, c.finding) for c in checks if c.finding and c.status in ("error", "warn")]
    if problems:
        lines.append("")
        lines.append("how to fix:")
        for check, finding in problems:
            lines.append(f"  {check.id} {check.title}: {finding.hint}")
    errors = sum(c.status == "error" for c in checks)
    warnings = sum(c.status == "warn" for c in checks)
    lines.append("")
    lines.append(f"{counted(errors, 'error')}, {counted(warnings, 'warning')}")
    return "\n".join(lines) + "\n"
