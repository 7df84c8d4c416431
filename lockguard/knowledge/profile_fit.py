"""Which profile of a project this machine runs (issue 33), from facts lockguard already knows:
the platform, the NVIDIA driver against the profile's CUDA floor (and the driver the profile
names), the GPU architectures against the profile's `gpu` list, glibc. Pure: the machine's facts
come as a MachineView (app/profile_pick.py reads them through NVML and the platform module).

A machine with an NVIDIA driver runs a CUDA profile that fits it rather than a CPU-only one (both
would import; the CPU one wastes the GPU); a machine without one runs only CPU-only profiles."""

from __future__ import annotations

from dataclasses import dataclass

from lockguard.errors import InputError
from lockguard.knowledge.tables import Knowledge
from lockguard.model.intent import Intent
from lockguard.model.profiles import chosen_profiles
from lockguard.model.versions import DriverVersion, GpuArch


@dataclass(frozen=True, slots=True, kw_only=True)
class MachineView:
    platform: str  # conda subdir: linux-64, osx-arm64, ...
    driver: DriverVersion | None = None
    archs: tuple[GpuArch, ...] = ()
    glibc: str | None = None  # None: not a glibc system (macOS) or unknown

    def said(self) -> str:
        parts = [self.platform]
        parts.append(f"driver {self.driver}" if self.driver else "no NVIDIA driver")
        if self.archs:
            parts.append("GPU " + ", ".join(sorted({str(a) for a in self.archs})))
        return ", ".join(parts)


def misfit(profile: Intent, machine: MachineView, knowledge: Knowledge) -> str | None:
    """Why this machine cannot run `profile` (None: it can)."""
    if machine.platform not in profile.platforms:
        locks = ", ".join(profile.platforms)
        return f"platform: this machine is {machine.platform}, the profile locks {locks}"
    if machine.glibc and _older(machine.glibc, profile.glibc):
        return f"glibc: this machine has {machine.glibc}, the profile needs {profile.glibc}+"
    if profile.cuda.mode != "version" or profile.cuda.version is None:
        return None
    cuda = profile.cuda.version
    if machine.driver is None:
        return f"driver: this machine has no NVIDIA driver, the profile locks CUDA {cuda}"
    toolkit = knowledge.toolkit(cuda)
    if toolkit is not None and machine.driver < toolkit.min_driver:
        return (
            f"driver: this machine's {machine.driver} is below CUDA {cuda}'s floor "
            f"{toolkit.min_driver} ({toolkit.origin})"
        )
    if profile.driver is not None and machine.driver < profile.driver:
        return (
            f"driver: this machine's {machine.driver} is below the profile's driver "
            f"{profile.driver}"
        )
    if profile.gpu and machine.archs:
        outside = sorted({str(a) for a in machine.archs if a not in profile.gpu})
        if outside:
            return (
                f"GPU architecture: this machine's {', '.join(outside)} is not in the profile's "
                f"gpu list ({', '.join(str(a) for a in profile.gpu)})"
            )
    return None


def fitting(project: Intent, machine: MachineView, knowledge: Knowledge) -> dict[str, str | None]:
    """profile name -> why it does not fit (None: it fits), in the intent's order."""
    return {str(p.profile): misfit(p, machine, knowledge) for p in project.profiles}


def pick_profile(
    project: Intent,
    name: str | None,
    machine: MachineView,
    knowledge: Knowledge,
    *,
    command: str,
) -> Intent:
    """The profile `command` works on: the one named (exit 2 if this machine cannot run it), or
    the one profile that fits this machine (exit 2 listing every profile and why, for none or
    several)."""
    by_name = {str(p.profile): p for p in project.profiles}
    if name is not None:
        chosen = chosen_profiles(project, (name,), option="--profile")[0]
        why = misfit(chosen, machine, knowledge)
        if why is not None:
            raise InputError(
                f"{command} --profile {name}: this machine cannot run it ({why})",
                hint="run it on a machine of that kind, or pick the profile that fits this one: "
                "`lockguard doctor` lists them",
            )
        return chosen
    reasons = fitting(project, machine, knowledge)
    fits = [n for n, why in reasons.items() if why is None]
    if len(fits) > 1 and machine.driver is not None:  # a GPU machine runs its CUDA profile
        gpu = [n for n in fits if by_name[n].cuda.mode == "version"]
        fits = gpu or fits
    if len(fits) == 1:
        return by_name[fits[0]]
    listed = "; ".join(f"{n}: {why or 'fits'}" for n, why in reasons.items())
    raise InputError(
        f"{command}: {'no profile' if not fits else 'more than one profile'} of "
        f"{project.source or 'the intent'} fits this machine ({machine.said()}): {listed}",
        hint=f"pass --profile NAME ({', '.join(fits or by_name)})",
    )


def _older(have: str, need: str) -> bool:
    try:
        return _pair(have) < _pair(need)
    except ValueError:
        return False


def _pair(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:2])
