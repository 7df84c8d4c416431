"""What a relock must say besides the new pins: a locked version the index no longer has (never
replaced silently), a locked version kept although it was yanked (with the index's reason), and
for an upgraded package that did not reach the newest release, what holds it back ("torch stays
2.1.2: the intent pins torch==2.1.*"). `lockguard outdated` asks the same question of every
locked package. Pure: the index is read through the PackageSource port.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from lockguard.model.cooldown import parse_span
from lockguard.model.locked import LockedPlatform
from lockguard.model.pip_lock import PipResolution
from lockguard.model.stack_names import FAMILY_HEADS
from lockguard.resolve.candidates import Candidate, CandidateFilter, ProjectVersions
from lockguard.resolve.ports import PackageSource
from lockguard.resolve.preferences import Preferences
from lockguard.resolve.requirements import Req


@dataclass(frozen=True, slots=True)
class HeldBack:
    """An upgraded (or outdated) package below the newest release that fits the target."""

    name: str
    version: str  # what the resolution has
    newest: str
    reasons: tuple[str, ...]
    locked: str | None = None  # what the lock had (None: not locked)

    def text(self) -> str:
        verb = (
            f"stays {self.version}" if self.locked == self.version else f"moves to {self.version}"
        )
        return f"{self.name} {verb}, not {self.newest}: {'; '.join(self.reasons)}"


@dataclass(frozen=True, slots=True)
class Vanished:
    """A locked version the index no longer lists."""

    name: str
    locked: str
    now: str | None  # what the resolve took instead (None: nothing)

    def text(self) -> str:
        instead = f"; a resolve takes {self.now} instead" if self.now else ""
        return f"{self.name} {self.locked} is locked, but the index no longer has it{instead}"


@dataclass(frozen=True, slots=True)
class KeptYanked:
    name: str
    version: str
    reason: str

    def text(self) -> str:
        return (
            f"{self.name} {self.version} is locked and was yanked from the index ({self.reason}); "
            "it is kept: "
            f"`lockguard resolve --upgrade-package {self.name}` moves it"
        )


@dataclass(frozen=True, slots=True)
class RelockNotes:
    platform: str
    vanished: tuple[Vanished, ...] = ()
    yanked: tuple[KeptYanked, ...] = ()
    held_back: tuple[HeldBack, ...] = ()


def newest_release(source: PackageSource, files: CandidateFilter, name: str) -> Version | None:
    """The newest final, not yanked release of `name` with a file for the target (first index)."""
    candidate = _newest(source, files, name)
    return candidate.version if candidate is not None else None


def _newest(source: PackageSource, files: CandidateFilter, name: str) -> Candidate | None:
    for project in source.projects(name)[:1]:
        versions = ProjectVersions(project, files)
        for version in versions.versions:
            if version.is_prerelease:
                continue
            candidate = versions.candidate(version)
            if candidate is not None and not candidate.yanked:
                return candidate
    return None


def cooled(
    source: PackageSource, files: CandidateFilter, name: str, beyond: Version | None
) -> tuple[str, str] | None:
    """(the newest release of `name`, why) when only its cooldown hides it: it is newer than
    `beyond`, the newest the cut-off lets through. A fixed date is left out: a lock frozen at a
    date means to leave out what came later, and saying so for every package is noise."""
    cutoff = files.cutoff(name)
    if cutoff.at is None or cutoff.span is None:
        return None
    latest = _newest(source, files.untimed(), name)
    if latest is None or (beyond is not None and latest.version <= beyond):
        return None
    times = sorted(f.upload_time for f in latest.files if f.upload_time)
    when = f" on {times[0][:10]}" if times else ""
    reason = f"{name} {latest.version} was uploaded{when}, after {files.cutoff_label(name)}"
    if times:
        uploaded = datetime.fromisoformat(times[0].replace("Z", "+00:00"))
        if uploaded.tzinfo is None:
            uploaded = uploaded.replace(tzinfo=timezone.utc)
        free = (uploaded + parse_span(cutoff.span)).date().isoformat()
        reason += f": its cooldown ends {free} (then `lockguard resolve --upgrade` can take it)"
    return str(latest.version), reason


def has_release(source: PackageSource, files: CandidateFilter, name: str, version: str) -> bool:
    try:
        wanted = Version(version)
    except InvalidVersion:
        return False
    return any(wanted in ProjectVersions(p, files).versions for p in source.projects(name))


def holders(
    name: str,
    newest: Version,
    pip: PipResolution,
    intent: Sequence[Req],
    explain_torch: Callable[[SpecifierSet], str | None],
    demands: Iterable[Req] = (),
) -> tuple[str, ...]:
    """Which requirement or knowledge rule excludes `newest` of `name` in this resolution."""
    reasons: list[str] = []
    for req in intent:
        if (
            req.name == name
            and req.url is None
            and not req.specifier.contains(newest, prereleases=True)
        ):
            reasons.append(f"the intent pins {req.key}{req.specifier}")
    for req in demands:
        if req.name == name and not req.specifier.contains(newest, prereleases=True):
            reasons.append(f"{req.by} asks for it")
    for parent in pip.pins:
        for child, spec in parent.dependencies:
            if child == name and spec and not _contains(spec, newest):
                reasons.append(f"{parent.name} {parent.version} requires {name}{spec}")
    pin = pip.pin(name)
    for constraint in pin.constraints if pin else ():
        spec = constraint[len(name) :].split(" (", 1)[0]
        if spec and not _contains(spec, newest):
            reasons.append(f"knowledge: {constraint}")
    if name == "torch":
        reason = explain_torch(SpecifierSet(f"=={newest}"))
        if reason:
            reasons.append(reason)
    if not reasons:
        reasons.append(f"no combination with {name} {newest} satisfies the other pins")
    return tuple(dict.fromkeys(reasons))


def _contains(spec: str, version: Version) -> bool:
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True  # not a specifier lockguard can read: it is not named as the reason


def held_back(
    name: str,
    pip: PipResolution,
    source: PackageSource,
    files: CandidateFilter,
    intent: Sequence[Req],
    explain_torch: Callable[[SpecifierSet], str | None],
    *,
    locked: str | None = None,
    demands: Iterable[Req] = (),
) -> HeldBack | None:
    """`name` below its newest release, and why; None when it is at the newest (or not pinned).
    A release only the exclude-newer cut-off hides (a cooldown) is the newest, with that reason."""
    pin = pip.pin(name)
    if pin is None:
        return None
    newest = newest_release(source, files, name)
    try:
        current = Version(pin.version)
    except InvalidVersion:
        return None
    hidden = cooled(source, files, name, max(newest, current) if newest else current)
    if (newest is None or current >= newest) and hidden is None:
        return None
    reasons: tuple[str, ...] = ()
    if newest is not None and current < newest:
        reasons = holders(name, newest, pip, intent, explain_torch, demands)
    return HeldBack(
        name,
        pin.version,
        hidden[0] if hidden else str(newest),
        reasons + ((hidden[1],) if hidden else ()),
        locked,
    )


def relock_notes(
    pip: PipResolution,
    preferences: Preferences,
    locked: LockedPlatform | None,
    source: PackageSource,
    files: CandidateFilter,
    intent: Sequence[Req],
    explain_torch: Callable[[SpecifierSet], str | None],
) -> RelockNotes:
    vanished, yanked = [], []
    for name, preferred in sorted(preferences.pip.items()):
        pin = pip.pin(name)
        if pin is None:
            continue  # no longer required: a removal, not a problem
        if pin.version == str(preferred) or _same(pin.version, preferred):
            if pin.files and all(f.yanked for f in pin.files):
                reason = next(
                    (f.yanked for f in pin.files if isinstance(f.yanked, str) and f.yanked), None
                )
                yanked.append(KeptYanked(name, pin.version, reason or "the index gives no reason"))
            continue
        locked_text = locked.pip.get(name, str(preferred)) if locked else str(preferred)
        if not has_release(source, files, name, locked_text):
            vanished.append(Vanished(name, locked_text, pin.version))
    asked = list(preferences.named)
    if any(name in FAMILY_HEADS for name in asked) and "torch" not in asked:
        asked.append("torch")
    back = []
    for name in asked:
        found = held_back(
            name,
            pip,
            source,
            files,
            intent,
            explain_torch,
            locked=locked.pip.get(name) if locked else None,
            demands=preferences.demands(),
        )
        if found is not None:
            back.append(found)
    return RelockNotes(pip.platform, tuple(vanished), tuple(yanked), tuple(back))


def _same(version: str, preferred: Version) -> bool:
    try:
        return Version(version) == preferred
    except InvalidVersion:
        return False
