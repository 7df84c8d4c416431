"""Why a direct requirement did not get its newest version: the newer versions the intent allows,
each with the reason it was passed over. Unpinned sglang with `cuda = "13.0"` lands on 0.5.2
without torch; the report says that 0.5.11 to 0.5.23 ship wheels for glibc 2.34 only, that 0.5.6
to 0.5.10.post1 need torch==2.9.1, whose CUDA 13.0 build only the (unreached) PyTorch index has,
and that 0.5.3 to 0.5.5.post3 need torch==2.8.0, published for no CUDA 13 (issue 23).

Reasons come from what the resolution saw: a candidate resolvelib rejected because a dependency
had no candidate (recorded by the reporter, resolve/conflicts.py), a version none of whose files
fits the target, an sdist that could not be built, a yanked release; anything else lost to the
rest of the intent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib.resolvers import Criterion

from lockguard.model.dist import DistFile
from lockguard.model.target import Target
from lockguard.resolve.candidates import Candidate, CandidateFilter, ProjectVersions
from lockguard.resolve.provider import Cause, Provider
from lockguard.resolve.requirements import Req
from lockguard.resolve.why_unsatisfiable import requirement_fact

SHOWN = 3  # newer versions named by default; -v names all
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_")

ExplainTorch: TypeAlias = Callable[[SpecifierSet], str | None]
Rejected: TypeAlias = Mapping[tuple[str, Version], Collection[Cause]]


@dataclass(frozen=True, slots=True)
class Passed:
    version: str
    reason: str


@dataclass(frozen=True, slots=True)
class NewerRejected:
    name: str
    chosen: str
    newer: tuple[Passed, ...]  # newest first

    def line(self, everything: bool) -> str:
        # what the intent could change first: a version the cut-off alone removed says less
        ordered = sorted(self.newer, key=lambda item: "after exclude-newer" in item.reason)
        shown = ordered if everything else ordered[:SHOWN]
        parts, last = [], None
        for item in shown:
            parts.append(f"{item.version} ({'the same' if item.reason == last else item.reason})")
            last = item.reason
        rest = len(self.newer) - len(shown)
        more = f"; and {rest} more (lockguard -v resolve names them all)" if rest else ""
        count = f"{len(self.newer)} newer version{'s' if len(self.newer) > 1 else ''}"
        return (
            f"{self.name} {self.chosen}, not newer: {count} the intent allows passed over: "
            f"{'; '.join(parts)}{more}"
        )


def newer_rejected(
    provider: Provider,
    rejected: Rejected,
    top: Sequence[Req],
    chosen: dict[str, str],
    explain_torch: ExplainTorch,
    criteria: Mapping[str, Criterion[Req, Candidate]] | None = None,
) -> list[NewerRejected]:
    """For each direct requirement: its newer versions that the intent's specifier allows, and why
    each was passed over. `rejected`: (name, version) -> resolvelib's failing criterion information
    (the reporter's record); `chosen`: name -> the locked version; `criteria`: resolvelib's final
    criteria (the requirements every locked name meets)."""
    out = []
    for req in top:
        if req.constraint_only or req.url or req.name not in chosen:
            continue
        locked = Version(chosen[req.name])
        newer = []
        for project in provider.source.projects(req.name):
            versions = ProjectVersions(project, provider.files)
            for version in versions.versions:
                if version <= locked or not req.specifier.contains(
                    version, prereleases=req.specifier.prereleases
                ):
                    continue
                if (
                    version.is_prerelease
                    and not locked.is_prerelease
                    and not req.specifier.prereleases
                ):
                    continue
                final = criteria[req.name].information if criteria and req.name in criteria else ()
                newer.append(
                    Passed(
                        str(version),
                        _why(provider, rejected, versions, req.name, version, explain_torch, final),
                    )
                )
        if newer:
            out.append(NewerRejected(req.name, chosen[req.name], tuple(newer)))
    return out


def _why(
    provider: Provider,
    rejected: Rejected,
    versions: ProjectVersions,
    name: str,
    version: Version,
    explain_torch: ExplainTorch,
    final: Collection[Cause] = (),
) -> str:
    infos = rejected.get((name, version))
    if infos:
        return _dependency_reason(provider, infos, explain_torch, (name, version))
    candidate = versions.candidate(version)
    if candidate is None:
        return unfit_reason(
            versions.files_of(version), provider.files, provider.context.target, name
        )
    failed = provider.build_failures.get(f"{name} {version}")
    if failed is not None:
        return f"its sdist could not be built ({failed.message})"
    if candidate.yanked:
        return "yanked"
    excluding = [i for i in final if not _allows(i.requirement, version)]
    if excluding:  # a requirement the lock meets, this version does not: a knowledge rule, a pin
        info = excluding[0]
        return requirement_fact(info.requirement, info.parent)
    return "it conflicts with the rest of the intent"


def _allows(req: Req, version: Version) -> bool:
    if req.url:
        return True
    return req.specifier.contains(version, prereleases=True)


def _dependency_reason(
    provider: Provider,
    infos: Collection[Cause],
    explain_torch: ExplainTorch,
    rejected: tuple[str, Version] | None = None,
) -> str:
    """Why the `rejected` candidate (name, version) could not be taken: its requirement on a
    dependency, and each other package's requirement on it under that package's own name (the
    information of the failing criterion holds them all: torch 2.6.0's triton==3.2.0 is not
    megablocks 0.9's)."""
    reqs = [i.requirement for i in infos]
    dep = reqs[0].name

    def own(info: Cause) -> bool:
        parent = info.parent
        return rejected is None or (
            parent is not None and (parent.name, parent.version) == rejected
        )

    mine = [i.requirement for i in infos if own(i) and not i.requirement.constraint_only]
    wanted = ", ".join(dict.fromkeys(f"{r.name}{r.specifier}" for r in mine)) or dep
    rules = [r.why for r in reqs if r.constraint_only and r.why and r.local is None]
    if rules:
        return f"it needs {wanted}, but {rules[0]}"
    if dep == "torch":
        every = [r for r in reqs if not r.constraint_only]
        wanted = ", ".join(dict.fromkeys(f"{r.name}{r.specifier}" for r in every)) or dep
        return f"it needs {wanted}: {_torch_reason(provider, reqs, explain_torch)}"
    others = [
        requirement_fact(i.requirement, i.parent)
        for i in infos
        if not own(i) and not i.requirement.constraint_only
    ]
    if others:
        return f"it needs {wanted}, but {'; '.join(dict.fromkeys(others))}"
    return f"it needs {wanted}, which has no candidate"


def _torch_reason(provider: Provider, reqs: list[Req], explain_torch: ExplainTorch) -> str:
    for req in reqs:
        reason = explain_torch(req.specifier) if not req.constraint_only else None
        if reason:
            return reason
    fits = [
        b
        for b in provider.context.torch_builds or ()
        if all(
            r.specifier.contains(Version(b.version), prereleases=True)
            for r in reqs
            if not r.constraint_only
        )
    ]
    for missed in provider.unreached.values():
        labels = [b.label for b in missed.builds if b in fits]
        if labels:
            return (
                f"{labels[0]} is published only on the PyTorch index ({missed.index_url}), "
                "which cannot be reached"
            )
    cut = [b for b in provider.after_cutoff.values() if b in fits]
    if cut:
        return f"{cut[0].label} came out {cut[0].released}, after exclude-newer"
    return "no torch build the CUDA stack allows meets it"


def unfit_reason(
    files: list[DistFile], candidate_filter: CandidateFilter, target: Target, name: str = ""
) -> str:
    """Why no file of a version of `name` (canonical) can be used on the target."""
    if not files:
        return f"no file for {target.platform} and Python {target.python}"
    if candidate_filter.cutoff(name).at is not None and not any(
        candidate_filter.fits_time(f, name) for f in files
    ):
        return f"uploaded after {candidate_filter.cutoff_label(name)}"
    if not any(candidate_filter.fits_python(f) for f in files):
        return f"it needs Python {files[0].requires_python}, the target has {target.python}"
    glibc = [
        (int(m.group(1)), int(m.group(2)))
        for f in files
        if f.is_wheel
        for m in [_MANYLINUX.search(f.filename)]
        if m
    ]
    if (
        target.glibc
        and glibc
        and len(glibc) == sum(1 for f in files if f.is_wheel)
        and not any(not f.is_wheel for f in files)
    ):
        needed = min(glibc)
        have = tuple(int(p) for p in target.glibc.split("."))
        if needed > have:
            return (
                f"its wheels need glibc {needed[0]}.{needed[1]} "
                f"(manylinux_{needed[0]}_{needed[1]}), "
                f"the target's is {target.glibc}"
            )
    return f"no file of it fits {target.platform} with Python {target.python}"
