"""`lockguard doctor`'s session: the probe in the target interpreter and the machine's facts (NVML,
system CUDA, the node's name) gathered at once, the lock read, the checks run over all of it."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lockguard.app.env_check import lock_view
from lockguard.app.profile_pick import this_machine
from lockguard.doctor.check import Check, Facts
from lockguard.doctor.checks import run_checks
from lockguard.doctor.imports import GPU_IMPORTS
from lockguard.doctor.profiles import profile_checks
from lockguard.errors import InputError
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.machine.nvml import detect_machine
from lockguard.io.machine.probe_runner import pid_alive, run_probe
from lockguard.io.machine.system_cuda import gather_system, node_identity
from lockguard.io.project.intent_file import load_project, source_of
from lockguard.io.project.project_files import read_snapshot
from lockguard.knowledge.profile_fit import pick_profile
from lockguard.lockfiles.headers import body_hash_of


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    facts: Facts
    checks: tuple[Check, ...]
    node: str
    node_source: str
    lock_meta: (
        Mapping[str, str] | None
    )  # {intent, file, body_hash} of the lock compared with, if any

    @property
    def exit_code(self) -> int:
        return 1 if any(c.status == "error" for c in self.checks) else 0


def diagnose(
    python: str, *, intent_path, smoke: bool, timeout: float, warn, profile: str | None = None
) -> Diagnosis:
    # the probe (a child process: `import torch` dominates) and the system facts run while NVML,
    # the knowledge and the lock are read here
    with ThreadPoolExecutor(max_workers=2) as pool:
        probe_job = pool.submit(
            run_probe, python, smoke=smoke, timeout=timeout, imports=GPU_IMPORTS
        )
        system_job = pool.submit(gather_system)
        # the shipped tables are validated by the test suite
        knowledge = load_knowledge(validate=False)
        machine = detect_machine()
        lock, lock_reason, lock_meta, fits = _lock(intent_path, knowledge, warn, profile, machine)
        probe, system = probe_job.result(), system_job.result()
    node, node_source = node_identity()
    alive = {p.pid: pid_alive(p.pid) for g in machine.gpus for p in g.processes}
    facts = Facts(
        probe,
        machine,
        system,
        lock,
        knowledge,
        alive=alive,
        lock_reason=lock_reason,
        smoke_requested=smoke,
    )
    return Diagnosis(
        facts=facts,
        checks=tuple(fits + list(run_checks(facts))),
        node=node,
        node_source=node_source,
        lock_meta=lock_meta,
    )


def _lock(intent_path, knowledge, warn, profile, machine):
    """(lock view, why there is none, {intent, file, body_hash}, the profile checks)."""
    try:
        intent = load_project(intent_path, validate=False, warn=warn)
    except InputError:
        if intent_path:
            raise
        reason = "no lockguard.toml here (pass --intent FILE to compare with a lock)"
        return None, reason, None, []
    fits: list[Check] = []
    if intent.profiles:  # which profiles this machine runs, and the one compared with
        view = this_machine(machine)
        fits = profile_checks(intent, view, knowledge)
        try:
            intent = pick_profile(intent, profile, view, knowledge, command="doctor")
        except InputError as exc:
            return None, exc.message, None, fits
    elif profile is not None:
        raise InputError(
            f"doctor --profile {profile}: {source_of(intent).path} has no [profiles]",
            hint="leave out --profile",
        )
    snapshot = read_snapshot(intent, scan_repo=False)
    requirements = snapshot.of_kind("requirements")
    if requirements is None or requirements.text is None:
        return (
            None,
            f"{source_of(intent).path.name} has no lock yet (run `lockguard resolve`)",
            None,
            fits,
        )
    meta = {
        "intent": str(source_of(intent).path),
        "file": requirements.path,
        "body_hash": "sha256:" + body_hash_of(requirements.text),
    }
    if intent.profile:
        meta["profile"] = intent.profile
    return lock_view(snapshot, knowledge), "", meta, fits
