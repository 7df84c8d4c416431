"""doctor's answer for a project with `[profiles]` (issue 33): which profiles this machine can run,
and for each other one the fact that rules it out (knowledge/profile_fit.py). Pure."""

from __future__ import annotations

from lockguard.doctor.check import Check, ok, skip
from lockguard.knowledge.profile_fit import MachineView, fitting
from lockguard.knowledge.tables import Knowledge
from lockguard.model.intent import Intent

PROFILE_ID = "profile"


def profile_checks(project: Intent, machine: MachineView, knowledge: Knowledge) -> list[Check]:
    """One line per profile: "ok" where this machine can run it, "skip" with the reason where
    not (a profile for another kind of machine is no error of this one)."""
    out = []
    for name, why in fitting(project, machine, knowledge).items():
        title = f"profile {name}"
        if why is None:
            out.append(ok(PROFILE_ID, title, f"this machine ({machine.said()}) can run it"))
        else:
            out.append(skip(PROFILE_ID, title, f"not this machine: {why}"))
    return out
