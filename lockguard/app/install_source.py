"""What a clean-install applies: the project's requirements.lock for this machine's platform, or a
pylock.toml (`--from`), with the lock as the inventory sees it, the entries pip installs (hashes and
index options) and where they come from."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from lockguard.app.env_check import host_conda_platform, lock_view
from lockguard.app.profile_pick import profile_for
from lockguard.app.project import load_project_intent
from lockguard.check.rules_lock import lock_state
from lockguard.check.snapshot import Snapshot
from lockguard.errors import InputError
from lockguard.install.lock_diff import LockView
from lockguard.install.pylock_source import disagreements, install_from_pylock
from lockguard.install.verify import direct_names
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.project.intent_file import project_here, source_of
from lockguard.io.project.project_files import parse_lock, read_snapshot
from lockguard.io.read import read_lock_text
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.lock_paths import lock_file


@dataclass(frozen=True, slots=True)
class LockSource:
    """What a clean-install applies: the lock as the inventory sees it, the entries pip installs
    (with hashes and index options) and where they come from."""

    view: LockView
    requirements: RequirementsLock
    label: str  # the file shown in the plan
    platform: str
    direct: tuple[str, ...]  # names whose modules the import smoke imports
    # the project (the conda side); None for a pylock.toml on its own
    snapshot: Snapshot | None = None
    links: tuple[str, ...] = ()  # file URLs pip may take (a pylock.toml names its files)


def project_source(snapshot: Snapshot, knowledge: Knowledge) -> LockSource:
    """The project's own lock: requirements.lock of the host's platform."""
    platform = (
        host_conda_platform()
        if host_conda_platform() in snapshot.intent.platforms
        else snapshot.intent.platforms[0]
    )
    label = source_of(snapshot.intent).root / lock_file(snapshot.intent, "requirements", platform)
    document = snapshot.of_kind("requirements", platform)
    requirements = (
        document.requirements if document and document.requirements else RequirementsLock()
    )
    return LockSource(
        lock_view(snapshot, knowledge),
        requirements,
        str(label),
        platform,
        tuple(direct_names(snapshot.intent.pip)),
        snapshot,
    )


def pylock_source(path: Path, snapshot: Snapshot | None, knowledge: Knowledge) -> LockSource:
    """`--from pylock.toml`: its packages are what pip installs. With a project, it must pin
    exactly what the project's lock pins (two locks that disagree are refused, never merged);
    without one it is the whole lock (pip only)."""
    text = read_lock_text(path)
    if text is None:
        raise InputError(
            f"{path} does not exist", file=str(path), hint="pass the pylock.toml to install from"
        )
    pylock = parse_lock("pylock", text, str(path))
    found = install_from_pylock(pylock, str(path), os.path.dirname(os.path.abspath(path)))
    requirements, links = found.requirements, tuple(found.links)
    pins = {name: entry.version for name, entry in requirements.entries.items()}
    if snapshot is None:
        return LockSource(
            LockView(pip=pins),
            requirements,
            str(path),
            host_conda_platform(),
            tuple(sorted(pins)),
            links=links,
        )
    source = project_source(snapshot, knowledge)
    differ = disagreements(pylock, source.view.pip)
    if differ:
        raise InputError(
            f"{path} pins other versions than the project's lock: {', '.join(differ[:5])}"
            + (f" and {len(differ) - 5} more" if len(differ) > 5 else ""),
            file=str(path),
            hint="run `lockguard resolve` (with `[outputs] pylock`) to write both from the intent, "
            "or run clean-install outside the project to apply the pylock.toml on its own",
        )
    return replace(source, requirements=requirements, label=str(path), links=links)


def lock_source(
    intent_path: Path | None, from_file: Path | None, *, warn=None, profile: str | None = None
) -> LockSource:
    """What to apply: the project's lock, which must be current; a pylock.toml inside the project,
    which must agree with it; or a pylock.toml on its own (outside any project). The knowledge is
    read as the plain check reads it (validate=False: no PEP 508 parse of its deep fields, about
    40 ms; the shipped files are validated by the test suite, and resolve validates any other)."""
    knowledge = load_knowledge(validate=False)
    if from_file is None:
        return project_source(_current_project(intent_path, knowledge, warn, profile), knowledge)
    snapshot = (
        _current_project(intent_path, knowledge, warn, profile)
        if intent_path is not None or project_here()
        else None
    )
    return pylock_source(from_file, snapshot, knowledge)


def _current_project(
    intent_path: Path | None, knowledge: Knowledge, warn, profile: str | None = None
) -> Snapshot:
    """The project's files (of the profile named, or the one that fits this machine), whose lock
    must be current."""
    intent = profile_for(
        load_project_intent(intent_path, warn=warn), profile, command="clean-install"
    )
    snapshot = read_snapshot(intent, scan_repo=False)
    lock_must_be_current(snapshot, knowledge)
    return snapshot


def lock_must_be_current(snapshot: Snapshot, knowledge: Knowledge) -> None:
    for finding in lock_state(snapshot):
        raise InputError(
            f"{finding.file}: {finding.message}",
            file=finding.file,
            hint="a clean-install applies only a current, untouched lock: " + (finding.hint or ""),
        )
