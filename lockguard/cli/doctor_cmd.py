"""`lockguard doctor`: probe this machine and an environment; diagnose the known GPU failures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from lockguard.cli.common import get_ui, intent_option, json_option


@click.command()
@click.option("--python", "python_exe", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="The environment's interpreter (default: $VIRTUAL_ENV's or $CONDA_PREFIX's python, else this one).")
@intent_option
@click.option("--smoke", is_flag=True, help="Also run a small matmul on each visible GPU, with a synchronize.")
@json_option
@click.pass_context
def doctor(ctx, python_exe, intent_path, smoke, as_json) -> int:
    """Check the NVIDIA driver, the GPUs, the libraries torch actually loads, nvcc and gcc,
    /dev/shm and the installed packages against the lock; say what is wrong and how to fix it.
    Exit 1 when an error-level problem is found."""
    from lockguard.doctor import report
    from lockguard.doctor.checks import run_checks
    from lockguard.io.machine.nvml import detect_machine
    from lockguard.io.machine.probe_runner import pid_alive, run_probe
    from lockguard.knowledge import load_knowledge

    ui = get_ui(ctx, "doctor")
    python = str(python_exe or _default_python())
    knowledge = load_knowledge()
    machine = detect_machine()
    probe = run_probe(python, smoke=smoke)
    lock = _lock(intent_path, knowledge, ui)
    alive = {p.pid: pid_alive(p.pid) for g in machine.gpus for p in g.processes}
    checks = run_checks(probe, machine, lock, knowledge, alive=alive)
    code = 1 if any(c.status == "error" for c in checks) else 0
    if as_json:
        ui.emit_json({
            "python": python,
            "machine": _machine_dict(machine),
            "probe": {"base": probe.base, "torch": probe.torch, "smoke": probe.smoke,
                      "returncode": probe.returncode, "stderr_tail": probe.stderr_tail},
            "checks": [c.to_dict() for c in checks],
            "findings": [c.finding.to_dict() for c in checks if c.finding],
        }, ok=code == 0, exit_code=code)
    else:
        gpus = ", ".join(f"{g.name} ({g.arch})" for g in machine.gpus) or "none"
        header = (f"lockguard doctor: {python}\n  machine: driver {machine.driver or 'none'}, "
                  f"CUDA up to {machine.cuda_max or '-'}, GPUs: {gpus}")
        ui.out(report.text(checks, header=header).rstrip())
    return code


def _default_python() -> str:
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if os.environ.get(key):
            candidate = Path(os.environ[key]) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
    return sys.executable


def _lock(intent_path, knowledge, ui):
    from lockguard.cli.env_check import lock_view
    from lockguard.errors import InputError
    from lockguard.io.project.intent_file import load_project
    from lockguard.io.project.project_files import read_snapshot

    try:
        intent = load_project(intent_path, validate=False, warn=ui.warn)
    except InputError:
        if intent_path:
            raise
        return None  # no project here: the lock checks are skipped
    snapshot = read_snapshot(intent, scan_repo=False)
    if snapshot.of_kind("requirements") is None or snapshot.of_kind("requirements").text is None:
        ui.warn(f"{intent.source.path.name} has no lock yet; the lock checks are skipped")
        return None
    return lock_view(snapshot, knowledge)


def _machine_dict(machine) -> dict:
    return {
        "driver": str(machine.driver) if machine.driver else None,
        "cuda_max": str(machine.cuda_max) if machine.cuda_max else None,
        "problem": machine.problem, "overridden": list(machine.overridden),
        "gpus": [{"index": g.index, "name": g.name, "arch": str(g.arch), "memory_total": g.memory_total,
                  "memory_used": g.memory_used, "mig": g.mig, "uuid": g.uuid,
                  "processes": [{"pid": p.pid, "used_memory": p.used_memory, "name": p.name} for p in g.processes]}
                 for g in machine.gpus],
    }
