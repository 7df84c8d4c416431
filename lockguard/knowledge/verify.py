"""Compare the [[patch]] rows of the knowledge with what PyPI's wheel METADATA says now. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from lockguard.knowledge.tables import Knowledge, TorchPatch

STACK_PREFIXES = ("nvidia-", "cuda-", "triton")


@dataclass(frozen=True, slots=True)
class LiveWheel:
    """What PyPI says about one torch wheel now."""

    version: str
    wheel: str | None  # None: the wheel the knowledge names is not on the index
    requires_python: str | None = None
    requires: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Difference:
    version: str
    field: str
    knowledge: str
    live: str
    origin: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {
            "version": self.version,
            "field": self.field,
            "knowledge": self.knowledge,
            "live": self.live,
            "origin": self.origin,
        }


def stack_requirements(requires: Iterable[str | Requirement]) -> set[str]:
    """The CUDA-stack part of a Requires-Dist list, spelled canonically (extras dropped)."""
    out = set()
    for item in requires:
        req = item if isinstance(item, Requirement) else Requirement(item)
        if req.marker is not None and "extra" in str(req.marker):
            continue
        name = canonicalize_name(req.name)
        if name.startswith(STACK_PREFIXES):
            marker = f"; {req.marker}" if req.marker else ""
            extras = "[" + ",".join(sorted(req.extras)) + "]" if req.extras else ""
            out.add(f"{name}{extras}{req.specifier}{marker}")
    return out


def compare_patch(patch: TorchPatch, live: LiveWheel) -> list[Difference]:
    if live.wheel is None:
        return [Difference(patch.version, "wheel", patch.wheel, "not on the index", patch.origin)]
    diffs = []
    if str(patch.requires_python) != str(_spec(live.requires_python)):
        diffs.append(
            Difference(
                patch.version,
                "requires-python",
                str(patch.requires_python),
                live.requires_python or "(none)",
                patch.origin,
            )
        )
    known = stack_requirements(patch.requires)
    now = stack_requirements(live.requires)
    for missing in sorted(now - known):
        diffs.append(Difference(patch.version, "requires", "(absent)", missing, patch.origin))
    for extra in sorted(known - now):
        diffs.append(Difference(patch.version, "requires", extra, "(absent)", patch.origin))
    return diffs


def _spec(text: str | None) -> SpecifierSet:
    return SpecifierSet(text or "")


def missing_releases(knowledge: Knowledge, live_versions: Iterable[str]) -> list[Difference]:
    """Final torch releases >= 2.0 on the index that the knowledge has no row for."""
    known = {p.version for p in knowledge.patches}
    out = []
    for text in live_versions:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if (
            version.is_prerelease
            or version.is_devrelease
            or version < Version("2.0")
            or version.local
        ):
            continue
        if str(version) not in known:
            out.append(Difference(str(version), "release", "(absent)", "published on the index"))
    return sorted(out, key=lambda d: Version(d.version))
