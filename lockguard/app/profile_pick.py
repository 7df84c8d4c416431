"""The profile a command that works on one machine uses (issue 33): clean-install, check --env
and doctor read this machine's facts (platform, NVML or LOCKGUARD_CUDA_DRIVER /
LOCKGUARD_GPU_ARCH, glibc) and knowledge/profile_fit.py picks."""

from __future__ import annotations

import platform as host_platform

from lockguard.app.env_check import host_conda_platform
from lockguard.io.knowledge.files import load_knowledge
from lockguard.knowledge.profile_fit import MachineView, fitting, pick_profile
from lockguard.model.intent import Intent
from lockguard.model.profiles import one_profile
from lockguard.model.target import MachineFacts


def this_machine(facts: MachineFacts | None = None) -> MachineView:
    """This machine as the profiles see it (`facts`: NVML's, when the caller has them)."""
    from lockguard.io.machine.nvml import detect_machine

    facts = facts or detect_machine()
    libc, version = host_platform.libc_ver()
    return MachineView(
        platform=host_conda_platform(),
        driver=facts.driver,
        archs=tuple(gpu.arch for gpu in facts.gpus if gpu.arch is not None),
        glibc=".".join(version.split(".")[:2]) if libc == "glibc" and version else None,
    )


def profile_for(project: Intent, name: str | None, *, command: str) -> Intent:
    """The intent `command` applies: the project's own without profiles (exit 2 if a profile was
    named), else the named profile or the one that fits this machine."""
    if not project.profiles:
        return one_profile(project, name)
    return pick_profile(project, name, this_machine(), load_knowledge(), command=command)


def profiles_here(project: Intent) -> dict[str, str | None]:
    """Each profile, and why this machine cannot run it (None: it can): for doctor."""
    return fitting(project, this_machine(), load_knowledge())
