"""Resolve the pip side for one target: resolvelib over the provider, pins with their `via`,
or an explanation that reads as a chain of facts (never resolvelib's repr)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import BaseReporter, Resolver
from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep

from lockguard.errors import Conflict, Unsatisfiable
from lockguard.knowledge.tables import Hazard
from lockguard.model.dist import DistFile
from lockguard.model.lock import INTENT
from lockguard.model.target import Target
from lockguard.resolve.candidates import CandidateFilter
from lockguard.resolve.ports import PackageSource
from lockguard.resolve.provider import Provider, ProviderContext
from lockguard.resolve.requirements import PYTHON, Req, split_key

MAX_ROUNDS = 20_000


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    index_url: str
    files: tuple[DistFile, ...]
    via: tuple[str, ...]  # parent names, or INTENT for top-level requirements
    dependencies: tuple[tuple[str, str], ...] = ()  # (name, specifier) this pin requires
    constraints: tuple[str, ...] = ()  # knowledge rules that bounded this pin

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(sorted({f.sha256 for f in self.files if f.sha256}))


@dataclass(frozen=True)
class PipResolution:
    platform: str
    pins: tuple[Pin, ...]
    conda_provided: tuple[tuple[str, str], ...] = ()

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)

    @property
    def indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.index_url for p in self.pins))


def resolve_pip(
    requirements: Sequence[str],
    source: PackageSource,
    target: Target,
    *,
    torch_versions: list[str] | None = None,
    torch_problem: Unsatisfiable | None = None,
    hazards: Sequence[Hazard] = (),
    conda_provided: dict[str, str] | None = None,
    exclude_newer: datetime | None = None,
    warn: Callable[[str], None] = lambda _m: None,
    explain_torch: Callable[[SpecifierSet], str | None] = lambda _s: None,
) -> PipResolution:
    """`explain_torch(spec)` says why the CUDA stack has no torch for `spec` (or None)."""
    files = CandidateFilter(target, exclude_newer)
    context = ProviderContext(
        target=target,
        torch_versions=[] if torch_problem else ([Version(v) for v in torch_versions] if torch_versions is not None else None),
        hazards=hazards,
        conda_provided={name: Version(v) for name, v in (conda_provided or {}).items()},
    )
    provider = Provider(source, files, context)
    top = [Req.parse(text) for text in requirements]
    source.prefetch_projects(sorted({r.name for r in top}))
    try:
        result = Resolver(provider, BaseReporter()).resolve(top, max_rounds=MAX_ROUNDS)
    except ResolutionImpossible as exc:
        raise _explain(exc, provider, target, torch_problem, explain_torch) from None
    except ResolutionTooDeep:
        raise Unsatisfiable(f"resolution did not finish within {MAX_ROUNDS} rounds",
                            hint="pin the packages that backtrack (lockguard -v resolve shows them)") from None
    if files.missing_upload_times:
        warn("exclude-newer could not be applied to files from " + ", ".join(sorted(files.missing_upload_times))
             + " (their index gives no upload times)")
    return _pins(result, target)


def _pins(result, target: Target) -> PipResolution:
    parents: dict[str, set[str]] = {}
    constraints: dict[str, set[str]] = {}
    for key, criterion in result.criteria.items():
        name, _extras = split_key(key)
        for info in criterion.information:
            req: Req = info.requirement
            if req.constraint_only:
                constraints.setdefault(name, set()).add(f"{req.name}{req.specifier} ({req.why})")
                continue
            parent = split_key(info.parent.key)[0] if info.parent is not None else INTENT
            if parent != name:
                parents.setdefault(name, set()).add(parent)
    children: dict[str, dict[str, str]] = {}
    for key, criterion in result.criteria.items():
        child, _extras = split_key(key)
        for info in criterion.information:
            req: Req = info.requirement
            if info.parent is None or req.constraint_only or child == PYTHON:
                continue
            parent = split_key(info.parent.key)[0]
            if parent != child:
                specs = children.setdefault(parent, {})
                specs[child] = ",".join(filter(None, [specs.get(child, ""), str(req.specifier)]))
    pins, provided = [], []
    for candidate in result.mapping.values():
        if candidate.extras or candidate.absent or candidate.name == PYTHON:
            continue
        if candidate.provided_by:
            provided.append((candidate.name, str(candidate.version)))
            continue
        pins.append(Pin(
            name=candidate.name,
            version=str(candidate.version),
            index_url=candidate.index_url,
            files=candidate.files,
            via=tuple(sorted(parents.get(candidate.name, {INTENT}), key=lambda p: (p != INTENT, p))),
            dependencies=tuple(sorted(children.get(candidate.name, {}).items())),
            constraints=tuple(sorted(constraints.get(candidate.name, ()))),
        ))
    pins.sort(key=lambda p: p.name)
    return PipResolution(target.platform, tuple(pins), tuple(sorted(provided)))


def _explain(exc: ResolutionImpossible, provider: Provider, target: Target,
             torch_problem: Unsatisfiable | None, explain_torch) -> Unsatisfiable:
    lines: list[str] = []
    conflicts: list[Conflict] = []
    names: list[str] = []
    for info in exc.causes:
        if info.requirement.name == "torch" and torch_problem is None:
            reason = explain_torch(info.requirement.specifier)
            if reason:
                torch_problem = Unsatisfiable(reason)
        req: Req = info.requirement
        who = f"{info.parent.name} {info.parent.version}" if info.parent is not None else "the intent"
        what = f"Python {req.specifier}" if req.name == PYTHON else f"{req.key}{req.specifier or ''}"
        fact = f"{who} needs {what}" + (f" [{req.why}]" if req.why else "")
        if fact not in lines:
            lines.append(fact)
            conflicts.append(Conflict(fact, "intent" if info.parent is None else "package metadata"))
        if req.name not in names:
            names.append(req.name)
    for name in names:
        for note in _why_few(name, provider, target, torch_problem):
            if note not in lines:
                lines.append(note)
                conflicts.append(Conflict(note, "knowledge" if name == "torch" else "index"))
    return Unsatisfiable("; ".join(lines), conflicts=conflicts,
                         hint="relax one of these requirements, or change cuda/python in the intent")


def _why_few(name: str, provider: Provider, target: Target, torch_problem: Unsatisfiable | None) -> list[str]:
    if name == PYTHON:
        return [f"the target Python is {target.python}"]
    if name == "torch" and torch_problem is not None:
        return [torch_problem.message]
    if name in provider.context.conda_provided:
        return [f"{name} is installed by the conda side at {provider.context.conda_provided[name]}"]
    candidates = provider.candidates_of(name)
    if not candidates:
        projects = provider.source.projects(name)
        if not projects:
            return [f"no index has a project named {name}"]
        return [f"no file of {name} fits {target.platform} with Python {target.python}"]
    if name == "torch" and provider.context.torch_versions is not None:
        allowed = ", ".join(str(v) for v in provider.context.torch_versions[:6])
        return [f"the CUDA stack allows torch {allowed}"]
    return []
