"""The installed distributions against the lock (LG200-LG205, LG230): which are missing, which
leave or change version, which are damaged or legacy .egg-info installs and reinstalled. Pure."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.names import INSTALLER_TOOLS, canonical_name, cuda_family, same_version
from lockguard.model.prefix import InstalledDist, PrefixSnapshot
from lockguard.model.wording import counted


@dataclass(frozen=True, slots=True, kw_only=True)
class LockView:
    """The lock as the inventory needs it."""

    pip: Mapping[str, str]  # canonical name -> version
    # name -> (version, build)
    conda: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)
    conda_solved: bool = False
    cuda: str | None = None  # "12.1" (torch's CUDA, else conda's)
    nccl: str | None = None  # version of the locked nvidia-nccl-* wheel
    cudnn: str | None = None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """An installed distribution whose files all move into the quarantine (it leaves the prefix,
    changes version, or is reinstalled because files of it are missing or changed)."""

    name: str
    version: str
    dist_info: str  # absolute
    reason: str
    note: str = ""  # how its files are known, when not from a RECORD (a legacy .egg-info install)


@dataclass
class LockDiff:
    """What the lock says against what is installed."""

    findings: list[Finding] = field(default_factory=list)
    outgoing: list[Outgoing] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # name==version to install
    conda_missing: list[str] = field(default_factory=list)


def against_lock(snap: PrefixSnapshot, lock: LockView, changed: dict[str, list[str]]) -> LockDiff:
    """LG200-LG205 and LG230: the findings, the distributions that go (outgoing), what pip and the
    conda side must install."""
    diff = LockDiff()
    copies: dict[str, list[Any]] = {}
    # a second .dist-info of a name in one folder leaves as a whole (LG206 says why); the copy
    # whose files are on disk is judged like any other
    extras = _extra_twins(snap, lock)
    for dist in extras:
        diff.outgoing.append(_leaving(dist.name, dist, extras[dist]))
    for dist in snap.dists:
        if dist.in_prefix and dist not in extras:
            copies.setdefault(dist.name, []).append(dist)
    conda_names = {canonical_name(r.name) for r in snap.conda}
    for name, version in sorted(lock.pip.items()):
        have = copies.get(name, [])
        if not have:
            diff.findings.append(
                codes.PACKAGE_MISSING.finding(
                    f"{name}=={version} is in the lock but not installed",
                    "run `lockguard clean-install`",
                    snap.prefix,
                )
            )
            diff.missing.append(f"{name}=={version}")
            continue
        good = [d for d in have if same_version(d.version, version)]
        for dist in have:
            if dist in good:
                continue
            diff.findings.append(
                codes.OTHER_VERSION.finding(
                    f"{name} {dist.version} is installed, the lock has {version}" + _legacy(dist),
                    "run `lockguard clean-install`",
                    dist.dist_info,
                )
            )
            diff.outgoing.append(_leaving(name, dist, _direction(dist.version, version)))
        legacy = [d for d in good if d.legacy]
        for dist in legacy:
            diff.findings.append(
                codes.LEGACY_EGG_INFO.finding(
                    f"{name} {dist.version} is a legacy .egg-info install (setup.py install; "
                    f"{dist.ownership_note()}): no RECORD, so nothing can verify its files or undo "
                    "them exactly",
                    f"`lockguard clean-install` reinstalls {name}=={version} from the "
                    "lock as a wheel (its .egg-info install moves into the quarantine)",
                    dist.dist_info,
                )
            )
            diff.outgoing.append(_leaving(name, dist, "repair: a legacy .egg-info install"))
        broken = [d for d in good if not d.legacy and _damage(d, changed)]
        for dist in broken:
            diff.findings += _damage_findings(dist, changed)
            diff.outgoing.append(_leaving(name, dist, "repair: " + _damage(dist, changed)))
        if not good or broken or len(legacy) == len(good):
            diff.missing.append(f"{name}=={version}")
    for name, have in sorted(copies.items()):
        if name in lock.pip or (name in INSTALLER_TOOLS and name not in lock.pip):
            continue
        for dist in have:
            if dist.installer == "conda" or name in conda_names:
                continue  # the conda side's
            diff.findings.append(
                codes.NOT_IN_LOCK.finding(
                    f"{name} {dist.version} is installed but not in the lock" + _legacy(dist),
                    "clean-install moves it into the quarantine",
                    dist.dist_info,
                )
            )
            diff.outgoing.append(_leaving(name, dist, _why_extra(name, lock)))
    if lock.conda_solved and snap.is_conda:
        present = {r.name: r for r in snap.conda}
        for name, (version, build) in sorted(lock.conda.items()):
            record = present.get(name)
            if record is None or record.version != version or (build and record.build != build):
                installed = f"{record.version}={record.build}" if record else "nothing"
                diff.findings.append(
                    codes.CONDA_RECORD_DIFFERS.finding(
                        f"conda {name}={version}={build} is locked, {installed} is installed",
                        "run `lockguard clean-install`",
                        os.path.join(snap.prefix, "conda-meta"),
                    )
                )
                diff.conda_missing.append(name)
    return diff


def twins(dists: Iterable[InstalledDist]) -> dict[tuple[str, str], list[InstalledDist]]:
    """(folder, name) -> the .dist-info of that name in that folder, where there are several."""
    groups: dict[tuple[str, str], list[InstalledDist]] = {}
    for dist in dists:
        groups.setdefault((dist.site, dist.name), []).append(dist)
    return {key: copies for key, copies in groups.items() if len(copies) > 1}


def _extra_twins(snap: PrefixSnapshot, lock: LockView) -> dict[InstalledDist, str]:
    """The copies of a distribution installed twice in one folder of the prefix that go, with
    why. The one kept is the copy whose files are on disk, at the lock's version if two qualify;
    where none can be told apart from the others, every copy but the lock's goes."""
    out: dict[InstalledDist, str] = {}
    for (_site, name), copies in sorted(twins(d for d in snap.dists if d.in_prefix).items()):
        live = [d for d in copies if not d.overwritten] or copies
        pinned = lock.pip.get(name)
        kept = next(
            (d for d in live if pinned and same_version(d.version, pinned)),
            live[0] if len(live) == 1 else None,
        )
        for dist in copies:
            if kept is None or dist is kept:
                continue
            over = (
                f"{kept.version} was installed over it"
                if dist.overwritten
                else f"a second .dist-info beside {kept.version}"
            )
            out[dist] = f"installed twice: {over}"
    return out


def _legacy(dist: InstalledDist) -> str:
    return f" (a legacy .egg-info install; {dist.ownership_note()})" if dist.legacy else ""


def _direction(have: str, want: str) -> str:
    try:
        return ("upgrade to " if Version(want) > Version(have) else "downgrade to ") + want
    except InvalidVersion:
        return f"replaced by {want}"


def _why_extra(name: str, lock: LockView) -> str:
    """nvidia-cudnn-cu11 leaving while the lock has nvidia-cudnn-cu12 is a CUDA family switch."""
    family = cuda_family(name)
    if family:
        stem = name[: -len(family)]
        twin = next(
            (
                n
                for n in sorted(lock.pip)
                if (other := cuda_family(n)) is not None
                and other != family
                and n[: -len(other)] == stem
            ),
            None,
        )
        if twin:
            return f"CUDA family switch: the lock has {twin} {lock.pip[twin]}"
    return "not in the lock"


def _significant(path: str) -> bool:
    """A RECORD file whose absence breaks the distribution (compiled .pyc are caches)."""
    return not path.endswith(".pyc") and "/__pycache__/" not in path


def _leaving(name: str, dist: InstalledDist, reason: str) -> Outgoing:
    """`dist` leaves the prefix (or is reinstalled) for `reason`, with how its files are known
    (nothing to add for a RECORD)."""
    return Outgoing(name, dist.version, dist.dist_info, reason, dist.ownership_note())


def _damage(dist: InstalledDist, changed: dict[str, list[str]]) -> str:
    parts = []
    missing = [p for p in dist.absent if _significant(p)]
    if missing:
        parts.append(f"{counted(len(missing), 'file')} missing")
    if dist.resized:
        parts.append(f"{len(dist.resized)} shared libraries of another size")
    if changed.get(dist.dist_info):
        parts.append(f"{counted(len(changed[dist.dist_info]), 'file')} changed")
    return ", ".join(parts)


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _damage_findings(dist: InstalledDist, changed: dict[str, list[str]]) -> list[Finding]:
    out = []
    fix = f"`lockguard clean-install` reinstalls {dist.name}=={dist.version}"
    missing = [p for p in dist.absent if _significant(p)]
    if missing or dist.resized:
        what = []
        if missing:
            what.append(
                f"{counted(len(missing), 'file')} of its RECORD "
                f"{'is' if len(missing) == 1 else 'are'} missing: {_shown(missing)}"
            )
        if dist.resized:
            what.append(
                f"{len(dist.resized)} shared libraries differ in size from the RECORD: "
                f"{_shown(list(dist.resized))}"
            )
        out.append(
            codes.RECORD_FILE_MISSING.finding(
                f"{dist.name} {dist.version}: " + "; ".join(what), fix, dist.dist_info
            )
        )
    if changed.get(dist.dist_info):
        files = changed[dist.dist_info]
        out.append(
            codes.FILE_DIFFERS.finding(
                f"{dist.name} {dist.version}: {counted(len(files), 'file')} "
                f"{'differs' if len(files) == 1 else 'differ'} from its RECORD "
                f"({_shown(files)})",
                fix.replace("clean-install`", "clean-install --verify-files`"),
                dist.dist_info,
            )
        )
    return out
