"""CUDA toolkit component wheels and the CUDA release each version belongs to.

`constraints/components.toml` lists, per CUDA major.minor, the versions NVIDIA published for every
component its `cuda-toolkit` manifest names (cuda-runtime, cuda-nvcc, nvvm, cuda-cccl, cublas,
nvjpeg, ...). A version belongs to release X.Y from the first X.Y version up to (not including) the
first version of the next release of the same major, so an update the table does not list still
maps to its release; a version a release lists belongs to it in any case (nvJPEG's numbers go back
once, between CUDA 12.1 and 12.2). A component with a `newer-within-major` policy (nvJitLink) may be
newer than the release, never older. A component wheel of another CUDA major never belongs to the
intent's release (LG129).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from lockguard.knowledge.row import Row
from lockguard.model.versions import CudaVersion

_NAME = re.compile(r"^nvidia-(?P<key>[a-z0-9-]+?)(?:-cu(?P<major>\d{2}))?$")


@dataclass(frozen=True, slots=True)
class ComponentRelease(Row):
    cuda: CudaVersion
    updates: tuple[str, ...]
    versions: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class ComponentPolicy(Row):
    component: str
    newer_within_major: bool
    why: str


@dataclass(frozen=True, slots=True)
class ComponentBound:
    """What the intent's CUDA allows for one component wheel, and why."""

    name: str  # the wheel's PyPI name
    spec: SpecifierSet  # "<0" when no version of this wheel can belong to the release
    cuda: CudaVersion
    reason: str  # "CUDA 12.4 ships nvidia-cuda-nvcc-cu12 12.4.99 to 12.4.131"
    origin: str  # constraints/components.toml:NN

    @property
    def specifier(self) -> SpecifierSet:
        """packaging's SpecifierSet of the bound (the resolver's requirements are made of them)."""
        return self.spec

    def allows(self, version: str) -> bool:
        try:
            return self.spec.contains(version, prereleases=True)
        except ValueError:  # packaging's InvalidVersion: not a version at all
            return False


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class Components:
    releases: tuple[ComponentRelease, ...]
    policies: tuple[ComponentPolicy, ...]

    @cached_property
    def keys(self) -> frozenset[str]:
        return frozenset(k for r in self.releases for k in r.versions)

    def key_of(self, name: str) -> tuple[str, int | None] | None:
        """(component, CUDA major of the wheel family) of a wheel name; None: not a component.
        nvidia-cublas-cu12 -> ("cublas", 12); nvidia-cublas (CUDA 13+) -> ("cublas", None)."""
        match = _NAME.match(name)
        if not match or match.group("key") not in self.keys:
            return None
        major = match.group("major")
        return match.group("key"), int(major) if major else None

    def release(self, cuda: CudaVersion) -> ComponentRelease | None:
        wanted = cuda.major_minor
        return next((r for r in self.releases if r.cuda == wanted), None)

    def policy(self, key: str) -> ComponentPolicy | None:
        return next((p for p in self.policies if p.component == key and p.newer_within_major), None)

    def _next_first(self, row: ComponentRelease, key: str) -> str | None:
        """The first version of `key` in the next release of the same major (None: none known)."""
        later = [
            r
            for r in self.releases
            if r.cuda.major == row.cuda.major and r.cuda > row.cuda and r.versions.get(key)
        ]
        if not later:
            return None
        following = min(later, key=lambda r: r.cuda)
        return _sorted(following.versions[key])[0]

    def _span(
        self, row: ComponentRelease, key: str
    ) -> tuple[str, str | None, bool, tuple[str, ...]] | None:
        """(lowest, upper, upper included, versions of other releases inside) of a release's
        versions of `key`: from its first version to the next release's first (excluded) or, where
        its own versions reach past that, to its last (included), less what another release
        lists."""
        versions = _sorted(row.versions.get(key, ()))
        if not versions:
            return None
        low, high = versions[0], versions[-1]
        upper = self._next_first(row, key)
        included = upper is not None and not Version(high) < Version(upper)
        if included:
            upper = high
        others = {
            v
            for r in self.releases
            if r.cuda.major == row.cuda.major and r is not row
            for v in r.versions.get(key, ())
            if v not in versions
        }
        inside = tuple(
            v
            for v in _sorted(others)
            if not Version(v) < Version(low) and (upper is None or Version(v) < Version(upper))
        )
        return low, upper, included, inside

    def bound(self, cuda: CudaVersion, name: str) -> ComponentBound | None:
        """The versions of wheel `name` that belong to CUDA `cuda`; None when `name` is not a
        component or lockguard has no row for that release."""
        found = self.key_of(name)
        row = self.release(cuda)
        if found is None or row is None:
            return None
        key, family = found
        if (family is not None and family != cuda.major) or (family is None and cuda.major < 13):
            own = (
                f"uses {_wheel(key, cuda.major)}"
                if row.versions.get(key)
                else f"has no {key} wheel"
            )
            return ComponentBound(
                name,
                SpecifierSet("<0"),
                cuda,
                f"{name} is a CUDA {family or '13+'} wheel; CUDA {cuda} {own}",
                row.origin,
            )
        span = self._span(row, key)
        if span is None:
            return None
        low, upper, included, inside = span
        versions = _sorted(row.versions[key])
        policy = self.policy(key)
        if policy is not None:
            spec = SpecifierSet(f">={low},<{cuda.major + 1}")
            return ComponentBound(
                name,
                spec,
                cuda,
                f"CUDA {cuda} needs {name} >= {low} (a newer one of "
                f"CUDA {cuda.major} is fine, {policy.origin})",
                row.origin,
            )
        clauses = [f">={low}"] + ([f"{'<=' if included else '<'}{upper}"] if upper else [])
        clauses += [f"!={v}" for v in inside]
        shown = f"{versions[0]}" if len(versions) == 1 else f"{versions[0]} to {versions[-1]}"
        return ComponentBound(
            name,
            SpecifierSet(",".join(clauses)),
            cuda,
            f"CUDA {cuda} ships {name} {shown}",
            row.origin,
        )

    def release_of(self, name: str, version: str) -> CudaVersion | None:
        """The CUDA release a component wheel version belongs to (None: unknown)."""
        found = self.key_of(name)
        if found is None:
            return None
        key, family = found
        try:
            Version(version)
        except InvalidVersion:
            return None  # not a version
        rows = [
            r
            for r in self.releases
            if (r.cuda.major == family if family is not None else r.cuda.major >= 13)
        ]
        listed = next(
            (
                r
                for r in rows
                if any(v == version or _same(v, version) for v in r.versions.get(key, ()))
            ),
            None,
        )
        if listed is not None:
            return listed.cuda
        for row in rows:
            span = self._span(row, key)
            if span is None:
                continue
            low, upper, included, inside = span
            if Version(version) < Version(low) or any(_same(v, version) for v in inside):
                continue
            if (
                upper is None
                or Version(version) < Version(upper)
                or (included and _same(version, upper))
            ):
                return row.cuda
        return None


def _same(a: str, b: str) -> bool:
    return Version(a) == Version(b)


def _sorted(texts: Iterable[str]) -> list[str]:
    """Normalized versions, ascending."""
    return [str(v) for v in sorted(Version(t) for t in texts)]


def _wheel(key: str, major: int) -> str:
    return f"nvidia-{key}-cu{major}" if major < 13 else f"nvidia-{key}"
