"""Compare constraints/components.toml and constraints/shared_files.toml with what the index says
now: NVIDIA's cuda-toolkit METADATA per release, and the RECORD of the CUDA wheels. Pure: the
reading is io/index/cuda_wheels.py's."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from email.parser import HeaderParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from lockguard.knowledge.components import Components
from lockguard.knowledge.shared_files import WheelFiles
from lockguard.knowledge.verify import Difference

TOOLKIT = "cuda-toolkit"
# the same empty file in many wheels: no clash (shared_files.toml)
NAMESPACE_MARKER = "nvidia/__init__.py"
_WHEEL = re.compile(r"^nvidia-(?P<key>[a-z0-9-]+?)(?:-cu(?P<major>\d{2}))?$")
_ALL = {
    "extra": "all",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
}


def toolkit_pins(metadata: str) -> dict[str, str]:
    """wheel name -> version that a cuda-toolkit METADATA pins under its extra "all" (the lower
    bound of nvJitLink's range)."""
    message = HeaderParser().parsestr(metadata)
    out = {}
    for text in message.get_all("Requires-Dist") or ():
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is None or not req.marker.evaluate(_ALL):
            continue
        bounds = [s.version.removesuffix(".*") for s in req.specifier if s.operator in ("==", ">=")]
        if bounds:
            out[req.name] = str(Version(bounds[0]))
    return out


def release_of_update(update: str) -> str | None:
    """ "13.0" for cuda-toolkit 13.0.3.0; None for a pre-release or not a version."""
    try:
        version = Version(update)
    except InvalidVersion:
        return None
    if version.is_prerelease or version.is_devrelease or len(version.release) < 2:
        return None
    return f"{version.release[0]}.{version.release[1]}"


def component_differences(
    components: Components, manifests: Mapping[str, Mapping[str, str]]
) -> list[Difference]:
    """`manifests`: cuda-toolkit version -> its pins (toolkit_pins). Each release the index has and
    the knowledge has not, each update, component and version that differ."""
    live: dict[str, dict[str, set[str]]] = {}
    updates: dict[str, list[str]] = {}
    for update, pins in manifests.items():
        release = release_of_update(update)
        if release is None:
            continue
        updates.setdefault(release, []).append(update)
        for name, version in pins.items():
            match = _WHEEL.match(name)
            if match:
                live.setdefault(release, {}).setdefault(match.group("key"), set()).add(version)
    rows = {str(r.cuda): r for r in components.releases}
    out = []
    for release in sorted(live, key=Version):
        row = rows.get(release)
        shown = ", ".join(sorted(updates[release], key=Version))
        if row is None:
            out.append(
                Difference(
                    f"CUDA {release}", "release", "(absent)", f"{TOOLKIT} {shown} on the index"
                )
            )
            continue
        if sorted(row.updates, key=Version) != sorted(updates[release], key=Version):
            out.append(
                Difference(f"CUDA {release}", "updates", ", ".join(row.updates), shown, row.origin)
            )
        for key in sorted(set(live[release]) | set(row.versions)):
            known = {str(Version(v)) for v in row.versions.get(key, ())}
            now = live[release].get(key, set())
            if known != now:
                out.append(
                    Difference(f"CUDA {release}", key, _listed(known), _listed(now), row.origin)
                )
    return out


def component_wheels(components: Components) -> list[str]:
    """The wheel names of every component of every release in the knowledge."""
    names = []
    for row in components.releases:
        suffix = f"-cu{row.cuda.major}" if row.cuda.major < 13 else ""
        names += [f"nvidia-{key}{suffix}" for key in row.versions]
    return sorted(set(names))


def shared_file_differences(
    wheel_files: WheelFiles, paths: Mapping[str, Iterable[str] | None]
) -> list[Difference]:
    """`paths`: wheel name -> the paths its newest wheel installs (None: no such wheel to read).
    Rows whose wheels no longer all install their path, and pairs of wheels that share a path no
    row names."""
    files = {
        name: frozenset(p for p in found if p != NAMESPACE_MARKER and ".dist-info/" not in p)
        for name, found in paths.items()
        if found is not None
    }
    out = []
    for row in wheel_files.shared:
        for name in row.wheels:
            if name not in files:
                out.append(
                    Difference(
                        name, "RECORD", "listed", "no wheel to read on the index", row.origin
                    )
                )
            elif row.path not in files[name]:
                out.append(
                    Difference(
                        ", ".join(row.wheels),
                        "shared path",
                        row.path,
                        f"{name} does not install it",
                        row.origin,
                    )
                )
    for separate in wheel_files.separate:
        for name in separate.wheels:
            if name not in files:
                out.append(
                    Difference(
                        name, "RECORD", "listed", "no wheel to read on the index", separate.origin
                    )
                )
    together = {frozenset(pair) for row in wheel_files.shared for pair in _pairs(row.wheels)}
    names = sorted(files)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            common = files[first] & files[second]
            if common and frozenset((first, second)) not in together:
                example = sorted(common)[0]
                more = f" and {len(common) - 1} more" if len(common) > 1 else ""
                out.append(
                    Difference(f"{first}, {second}", "shared path", "(absent)", f"{example}{more}")
                )
    return out


def _pairs(names: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def _listed(versions: set[str]) -> str:
    return ", ".join(sorted(versions, key=Version)) if versions else "(absent)"
