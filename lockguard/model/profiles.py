"""The profiles of a project (`[profiles.NAME]`, issue 33): which ones a command works on. Pure.

model/intent_profiles.py reads them; this module picks among them: by the names a command was
given, or (knowledge/profile_fit.py) by the machine a command runs on."""

from __future__ import annotations

import difflib

from lockguard.errors import InputError
from lockguard.model.intent import Intent


def profile_names(project: Intent) -> list[str]:
    return [str(p.profile) for p in project.profiles]


def chosen_profiles(project: Intent, names: tuple[str, ...], *, option: str) -> list[Intent]:
    """The profiles `names` asks for (every profile, in the intent's order, when it names none);
    exit 2 for a name the intent has no profile of."""
    if not names:
        return list(project.profiles)
    by_name = {str(p.profile): p for p in project.profiles}
    for name in names:
        if name not in by_name:
            near = difflib.get_close_matches(name, by_name, n=1)
            raise InputError(
                f"{option} {name}: {project.source or 'the intent'} has no profile {name!r} "
                f"(its profiles: {', '.join(by_name)})",
                hint=f"did you mean {option} {near[0]}?"
                if near
                else f"use one of {', '.join(by_name)}",
            )
    return [by_name[name] for name in dict.fromkeys(names)]


def one_profile(project: Intent, name: str | None, *, option: str = "--profile") -> Intent:
    """The one intent a command that works on a single lock uses: the project's own intent
    without profiles, the named profile with them (exit 2 when none is named: the caller picks
    by the machine where it can, knowledge/profile_fit.py)."""
    if not project.profiles:
        if name:
            raise InputError(
                f"{option} {name}: {project.source or 'the intent'} has no [profiles]",
                hint=f"add [profiles.{name}] to the intent, or leave out {option}",
            )
        return project
    if name is None:
        raise InputError(
            f"{project.source or 'the intent'} has profiles ({', '.join(profile_names(project))}): "
            f"say which one with {option} NAME",
            hint=f"e.g. {option} {profile_names(project)[0]}",
        )
    return chosen_profiles(project, (name,), option=option)[0]
