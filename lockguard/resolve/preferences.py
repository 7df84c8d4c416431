"""Locked versions as preferences: a resolve tries the existing lock's version of every name first,
so only what the intent change forces moves (as pip-compile with its output file, `uv pip compile
-o`, `conda-lock --update`, `pixi update`). `--upgrade` drops the preferences, `--upgrade-package
NAME[==VERSION]` lifts them for NAME (and, for torch, torchvision and torchaudio, for the whole
torch family, which is only valid together). A hand edit that `--accept-edits` adopts works as
`--upgrade-package NAME==VERSION` does: the name (and its family) is freed and the edited version
demanded, so an edit no resolution can meet is exit 3, explained. Pure: the lock is read in
io/project/prior_lock.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from lockguard.model.locked import LockedConda, LockedPlatform
from lockguard.model.stack_names import FAMILY_HEADS, TORCH_FAMILY
from lockguard.model.upgrades import UPGRADE_OPTION, UpgradeRequest
from lockguard.resolve.requirements import Req


def unknown_names(
    upgrade: UpgradeRequest, locked: Iterable[LockedPlatform], intent_names: Iterable[str]
) -> list[str]:
    """Names given to --upgrade-package that are neither in the lock nor in the intent."""
    known = set(intent_names)
    for platform in locked:
        known |= set(platform.pip) | {record.name for record in platform.conda}
    return [name for name in upgrade.named if name not in known]


def family_of(name: str, locked: LockedPlatform | None) -> frozenset[str]:
    """The names an upgrade of `name` frees: itself, or for torch, torchvision and torchaudio the
    torch family and the nvidia-* wheels that torch (directly or through them) brought in."""
    if name not in FAMILY_HEADS:
        return frozenset({name})
    family = set(TORCH_FAMILY)
    if locked is not None:
        for other in locked.pip:
            if other.startswith("nvidia-") and _brought_in_by(other, family, locked.via):
                family.add(other)
    return frozenset(family)


def _brought_in_by(name: str, family: set[str], via: Mapping[str, tuple[str, ...]]) -> bool:
    """Does the `# via` graph lead from `name` up to a member of `family`?"""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        for parent in via.get(current, ()):
            if parent in family:
                return True
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return False


@dataclass(frozen=True, slots=True)
class Preferences:
    """What one platform's resolve tries first (`pip`, `conda`), which names an upgrade freed,
    and the exact versions --upgrade-package NAME==VERSION demands."""

    pip: Mapping[str, Version] = field(default_factory=dict)
    conda: tuple[LockedConda, ...] = ()
    freed: frozenset[str] = frozenset()
    named: tuple[str, ...] = ()  # the names the user gave (held-back reasons are given for these)
    demanded: tuple[tuple[str, str], ...] = ()  # (name, version) from NAME==VERSION
    adopted: tuple[tuple[str, str, str], ...] = ()  # (name, version, file) of adopted hand edits
    # (name, version, profile): another profile's version of a package every profile locks
    shared: tuple[tuple[str, str, str], ...] = ()

    def version(self, name: str) -> Version | None:
        return self.pip.get(name)

    def demands(self) -> list[Req]:
        """NAME==VERSION as constraints: they bound NAME wherever it is required, install
        nothing."""
        return (
            [
                Req(
                    name,
                    SpecifierSet(f"=={version}"),
                    constraint_only=True,
                    by=f"{UPGRADE_OPTION} {name}=={version}",
                )
                for name, version in self.demanded
            ]
            + [
                Req(
                    name,
                    SpecifierSet(f"=={version}"),
                    constraint_only=True,
                    by=f"the hand edit {name}=={version} in {file} (--accept-edits)",
                )
                for name, version, file in self.adopted
            ]
            + [
                Req(
                    name,
                    SpecifierSet(f"=={version}"),
                    constraint_only=True,
                    by=f"{name}=={version}, the version profile {profile} locks (one version in "
                    "every profile)",
                )
                for name, version, profile in self.shared
            ]
        )


def unmet_adoptions(
    preferences: Preferences, pins: Mapping[str, str]
) -> list[tuple[str, str, str]]:
    """The adopted hand edits (name, version, file) the resolution does not pin: a demand is a
    constraint, met as well by a resolution that drops the name (a dependant backtracked to a
    release that does not need it), which is not adopting the edit."""
    return [
        (name, version, file)
        for name, version, file in preferences.adopted
        if not _same_version(pins.get(name), version)
    ]


def _same_version(pinned: str | None, wanted: str) -> bool:
    if pinned is None:
        return False
    try:
        return Version(pinned) == Version(wanted)
    except InvalidVersion:
        return pinned == wanted


def preferences_for(
    locked: LockedPlatform | None,
    upgrade: UpgradeRequest,
    adopted: Iterable[tuple[str, str | None, str]] = (),
    shared: tuple[tuple[str, str, str], ...] = (),
) -> Preferences:
    """`adopted`: (name, edited version or None for a removed pin, file) of the hand edits
    --accept-edits adopts; `shared`: (name, version, profile) the other profiles of the project
    ask for (model/shared_pins.py), freed from this lock and demanded."""
    demanded = tuple((name, version) for name, version in upgrade.packages if version)
    edits = tuple(adopted)
    kept = tuple(
        (name, version, file)
        for name, version, file in edits
        if version and name not in dict(demanded)  # --upgrade-package NAME==VERSION wins
    )
    if upgrade.everything or locked is None:
        return Preferences(
            freed=frozenset(locked.pip) if locked and upgrade.everything else frozenset(),
            named=upgrade.named,
            demanded=demanded,
            adopted=kept,
            shared=shared,
        )
    freed: set[str] = set()
    asked = (*upgrade.named, *(name for name, _version, _file in edits), *(s[0] for s in shared))
    for name in asked:
        freed |= family_of(name, locked)
    pip: dict[str, Version] = {}
    for name, text in locked.pip.items():
        if name in freed:
            continue
        try:
            pip[name] = Version(text)
        except InvalidVersion:
            continue  # not a version the resolver can prefer: it is resolved as if unlocked
    conda = tuple(record for record in locked.conda if record.name not in freed)
    return Preferences(pip, conda, frozenset(freed), upgrade.named, demanded, kept, shared)
