"""`lockguard resolve` of a project with `[profiles]` (issue 33): every profile (or those named
with --profile) locked into its own files, all written together or not at all under the one lock
set, and one version of a package every profile locks wherever the profiles' facts allow it.

The shared rule, after each profile was resolved on its own (each keeping its own lock):
- a package locked by two profiles or more at different versions (public versions: torch's
  +cu124 and +cu121 builds are one version) gets one target version: the highest one a profile
  kept from its lock (a relock moves nothing that needs no move), else the highest;
- each profile at another version is resolved again with the target demanded (as
  `--upgrade-package NAME==VERSION` demands it); where its facts forbid it (its CUDA, driver,
  platform, Python) the resolver's own explanation becomes the reason, recorded in the profile's
  requirements lock header (`lockguard-held-back`) and said, and `lockguard check` accepts the
  difference only with that reason (LG113).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from packaging.version import InvalidVersion, Version

from lockguard.app.relock import Relock
from lockguard.app.reporting import Messages
from lockguard.app.resolve_outcome import (
    Resolved,
    ResolveOutcome,
    at_its_line,
    at_requirement_line,
)
from lockguard.check.lock_changes import ChangeReport
from lockguard.errors import InputError, UnknownProject
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.intent import Intent
from lockguard.model.profiles import chosen_profiles
from lockguard.model.shared_pins import SharedPins, public_version


class ResolveSession(Protocol):
    """What this module asks of one intent's resolve (app/resolve_session.py's ResolveSession)."""

    relock: Relock

    def resolve(self) -> Resolved: ...
    def names_near(self, name: str) -> list[str]: ...
    def remember(self) -> None: ...
    def will_write(self) -> None: ...
    def lock_set(
        self, *, exclusive: bool = True, wait: bool = True
    ) -> AbstractContextManager[Any]: ...
    def refuse_unsafe_files(self, *, writing: bool) -> None: ...
    def refuse_what_check_rejects(
        self, platforms: tuple[str, ...], outputs: dict[Path, str]
    ) -> None: ...
    def stale(self, outputs: dict[Path, str]) -> list[Path]: ...
    def write(self, outputs: dict[Path, str]) -> list[Path]: ...


MAX_ROUNDS = 3  # a demanded version may move other shared packages: settle them, boundedly
SessionFactory = Callable[[Intent, SharedPins | None], ResolveSession]


@dataclass
class _Profile:
    """One profile's resolve as it stands."""

    intent: Intent
    session: ResolveSession
    resolved: Resolved
    locked: dict[str, str]  # its lock's versions before this run (public), by name
    demanded: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (version, by)
    held_back: dict[str, str] = field(default_factory=dict)  # name -> header line

    @property
    def name(self) -> str:
        return str(self.intent.profile)

    def versions(self) -> dict[str, str]:
        """The public version of each pip package it locks (every platform of the profile)."""
        out: dict[str, str] = {}
        for platform in self.resolved.summary.get("platforms", {}).values():
            for package, version in (platform.get("pip") or {}).items():
                out[package] = public_version(version)
        return out


def locked_versions(relock: Relock) -> dict[str, str]:
    """The public versions a profile's lock held before this run, by name."""
    return {
        name: public_version(version)
        for platform in relock.prior().platforms.values()
        for name, version in platform.pip.items()
    }


def resolve_profiles(
    ui: Messages,
    project: Intent,
    names: tuple[str, ...],
    make: SessionFactory,
    *,
    check_only: bool,
    wait: bool,
) -> ResolveOutcome:
    chosen = chosen_profiles(project, names, option="--profile")
    writing = not check_only
    sessions = [make(intent, None) for intent in chosen]
    lead = sessions[0]
    if writing:
        lead.will_write()
    with lead.lock_set(exclusive=writing, wait=wait):
        for session in sessions:
            session.refuse_unsafe_files(writing=writing)
        profiles = [_first(ui, intent, s) for intent, s in zip(chosen, sessions, strict=True)]
        others = _unchosen_versions(project, chosen)
        _share(ui, profiles, others, make)
        outputs: dict[Path, str] = {}
        reports = []
        for profile in profiles:
            resolved, session = profile.resolved, profile.session
            if not resolved.remembered:
                session.refuse_what_check_rejects(resolved.platforms, resolved.outputs)
                session.remember()
            outputs.update(resolved.outputs)
            reports.append(_labelled(profile.name, session.relock.changes(resolved.outputs)))
        changes = ChangeReport(
            tuple(p for r in reports for p in r.platforms),
            tuple(e for r in reports for e in r.edits),
        )
        if not writing:
            return ResolveOutcome(
                changes=changes,
                checked=True,
                stale=tuple(lead.stale(outputs)),
                vanished=tuple(v for p in profiles for v in p.session.relock.vanished()),
            )
        written = lead.write(outputs)
        summary = {
            "written": [str(p) for p in written],
            "profiles": {p.name: p.resolved.summary for p in profiles},
        }
        return ResolveOutcome(
            changes=changes, checked=False, written=tuple(written), summary=summary
        )


def _first(ui: Messages, intent: Intent, session: ResolveSession) -> _Profile:
    ui.info(f"profile {intent.profile}:")
    resolved = _resolve(session, intent)
    return _Profile(intent, session, resolved, locked_versions(session.relock))


def _resolve(session: ResolveSession, intent: Intent) -> Resolved:
    try:
        return session.resolve()
    except UnknownProject as exc:
        raise at_its_line(exc, intent, session.names_near(exc.name)) from None
    except Unsatisfiable as exc:
        raise at_requirement_line(exc, intent) from None


def _unchosen_versions(project: Intent, chosen: list[Intent]) -> dict[str, dict[str, str]]:
    """The locked versions of the profiles not resolved in this run (--profile names a subset):
    the shared rule holds their lock files as they are."""
    out: dict[str, dict[str, str]] = {}
    for intent in project.profiles:
        if intent in chosen:
            continue
        versions = locked_versions(Relock(intent))
        if versions:
            out[str(intent.profile)] = versions
    return out


def _share(
    ui: Messages,
    profiles: list[_Profile],
    others: dict[str, dict[str, str]],
    make: SessionFactory,
) -> None:
    """The shared rule (see the module's docstring), settled in at most MAX_ROUNDS rounds."""
    for _round in range(MAX_ROUNDS):
        asks = _targets(profiles, others)
        if not asks:
            return
        for profile in profiles:
            wanted = asks.get(profile.name)
            if wanted:
                _demand(ui, profile, wanted, make)


def _targets(
    profiles: list[_Profile], others: dict[str, dict[str, str]]
) -> dict[str, dict[str, tuple[str, str]]]:
    """profile -> {name: (target version, a profile that locks it)} for each profile whose
    version of a shared package is another one (and not already held back with a reason)."""
    holders: dict[str, dict[str, list[str]]] = {}  # name -> version -> profiles
    kept: dict[str, set[str]] = {}  # name -> versions a profile kept from its own lock
    resolved = {profile.name: profile for profile in profiles}
    for profile in profiles:
        for name, version in profile.versions().items():
            holders.setdefault(name, {}).setdefault(version, []).append(profile.name)
            if profile.locked.get(name) == version:
                kept.setdefault(name, set()).add(version)
    for other, versions in others.items():
        for name, version in versions.items():
            holders.setdefault(name, {}).setdefault(version, []).append(other)
            kept.setdefault(name, set()).add(version)
    asks: dict[str, dict[str, tuple[str, str]]] = {}
    for name, by_version in holders.items():
        if len(by_version) < 2:
            continue
        choices = kept.get(name) or set(by_version)
        target = max(choices, key=_order)
        by = sorted(by_version[target])[0]
        for version, holding in by_version.items():
            for held in holding:
                mine = resolved.get(held)  # None: a profile not resolved in this run
                if version == target or mine is None or name in mine.held_back:
                    continue
                asks.setdefault(held, {})[name] = (target, by)
    return asks


def _order(version: str) -> tuple[int, Version | str]:
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def _demand(
    ui: Messages, profile: _Profile, wanted: dict[str, tuple[str, str]], make: SessionFactory
) -> None:
    """Resolve `profile` again with the shared versions demanded; a demand its facts forbid is
    held back with the resolver's reason, the others kept."""
    asked = {**profile.demanded, **wanted}
    together = _attempt(profile, asked, make)
    if together is None:
        return _say_moves(ui, profile, wanted)
    failed: dict[str, str] = {}
    if len(asked) == 1:
        failed = dict.fromkeys(asked, together)
    else:  # which of them cannot be met: each alone
        for name, pin in asked.items():
            reason = _attempt(profile, {name: pin}, make, keep=False)
            if reason is not None:
                failed[name] = reason
    versions = profile.versions()
    for name, reason in failed.items():
        target, by = asked.pop(name)
        line = f"{name} {versions.get(name, '?')} ({by} locks {target}): {reason}"
        profile.held_back[name] = line
        ui.info(f"profile {profile.name} keeps {line}")
    again = _attempt(profile, asked, make)
    if again is not None:  # what passed alone fails together: hold them all back
        for name, (target, by) in asked.items():
            line = f"{name} {versions.get(name, '?')} ({by} locks {target}): {again}"
            profile.held_back[name] = line
        _attempt(profile, {}, make)
        return None
    return _say_moves(ui, profile, {n: p for n, p in wanted.items() if n in asked})


def _attempt(
    profile: _Profile, asked: dict[str, tuple[str, str]], make: SessionFactory, keep: bool = True
) -> str | None:
    """Resolve the profile with `asked` demanded (and its held-back lines); None when it
    resolved (kept as the profile's resolve when `keep`), else the reason it cannot."""
    shared = SharedPins(
        demanded=tuple(sorted((n, v, by) for n, (v, by) in asked.items())),
        held_back=tuple(sorted(profile.held_back.values())),
    )
    session = make(profile.intent, shared)
    try:
        resolved = session.resolve()
    except Unsatisfiable as exc:
        return _one_line(exc.message)
    except InputError as exc:  # a demanded version with no file for this profile's platform
        return _one_line(str(exc))
    if keep:
        profile.session, profile.resolved, profile.demanded = session, resolved, dict(asked)
    return None


def _say_moves(ui: Messages, profile: _Profile, moved: dict[str, tuple[str, str]]) -> None:
    for name, (target, by) in sorted(moved.items()):
        ui.info(
            f"profile {profile.name}: {name} {target}, the version {by} locks (one version in "
            "every profile)"
        )


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def _labelled(profile: str, report: ChangeReport) -> ChangeReport:
    """The change report with each platform named after its profile ("h100 linux-64")."""
    return ChangeReport(
        tuple(replace(p, platform=f"{profile} {p.platform}") for p in report.platforms),
        report.edits,
    )
