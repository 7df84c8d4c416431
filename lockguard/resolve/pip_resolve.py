"""Resolve the pip side for one target: resolvelib over the provider, pins with their `via`,
or an explanation that reads as a chain of facts (never resolvelib's repr)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import Resolver
from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep, Result

from lockguard.errors import SourceUnreachable
from lockguard.knowledge.tables import Hazard
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.names import INTENT
from lockguard.model.pip_lock import Pin, PipResolution
from lockguard.model.target import Target
from lockguard.resolve.candidates import Candidate, CandidateFilter
from lockguard.resolve.conflicts import ConflictWatcher, Decisive, SearchExhausted
from lockguard.resolve.ports import PackageSource
from lockguard.resolve.preferences import Preferences
from lockguard.resolve.provider import Cause, Provider, ProviderContext
from lockguard.resolve.rejections import newer_rejected
from lockguard.resolve.requirements import PYTHON, Req, split_key
from lockguard.resolve.torch_builds import TorchBuild
from lockguard.resolve.unreached import (
    FAMILY,
    lock_may_depend_on,
    raise_if_the_only_way_out,
    unreached_text,
)
from lockguard.resolve.why_unsatisfiable import explain_unsatisfiable

MAX_ROUNDS = 20_000


def resolve_pip(
    requirements: Sequence[str],
    source: PackageSource,
    target: Target,
    *,
    torch_builds: list[TorchBuild] | None = None,
    torch_problem: Unsatisfiable | None = None,
    hazards: Sequence[Hazard] = (),
    conda_provided: dict[str, str] | None = None,
    exclude_newer: datetime | None = None,
    candidate_filter: CandidateFilter | None = None,
    warn: Callable[[str], None] = lambda _m: None,
    explain_torch: Callable[[SpecifierSet], str | None] = lambda _s: None,
    name_rules: Callable[[str], list[Req]] = lambda _n: [],
    preferences: Preferences | None = None,
    note: Callable[[str], None] = lambda _m: None,
    everything: bool = False,
) -> PipResolution:
    """`explain_torch(spec)` says why the CUDA stack has no torch for `spec` (or None);
    `name_rules(name)` are the knowledge's constraints on a name wherever it is required;
    `preferences`: the existing lock's versions, tried first (resolve/preferences.py); `note`
    hears which newer versions of a direct requirement were passed over, and why (the newest few),
    `everything` (-v) names every one of them in that line."""
    # the intent's cut-offs (exclude-newer-package's too), else exclude-newer alone
    files = candidate_filter or CandidateFilter(target, exclude_newer)
    context = ProviderContext(
        target=target,
        torch_builds=[] if torch_problem else torch_builds,
        hazards=hazards,
        conda_provided={name: Version(v) for name, v in (conda_provided or {}).items()},
        name_rules=name_rules,
        preferences=preferences,
    )
    provider = Provider(source, files, context)
    top = direct = merged_requirements(requirements)
    top = [
        rule for name in dict.fromkeys(r.name for r in top) for rule in provider.rules_for(name)
    ] + top
    if preferences is not None:
        top = preferences.demands() + top  # --upgrade-package NAME==VERSION
    source.prefetch_projects(sorted({r.name for r in top if not r.constraint_only}))
    watcher = ConflictWatcher(provider, top)
    try:
        result = Resolver(provider, watcher).resolve(top, max_rounds=MAX_ROUNDS)
    except ResolutionImpossible as exc:
        _unless_the_rest_clashes(provider, top, exc.causes, target, explain_torch)
        raise explain_unsatisfiable(
            exc.causes, provider, target, torch_problem, explain_torch
        ) from None
    except Decisive as exc:
        _unless_the_rest_clashes(provider, top, exc.causes, target, explain_torch)
        raise explain_unsatisfiable(
            exc.causes, provider, target, torch_problem, explain_torch, proof=exc.lines
        ) from None
    except SearchExhausted as exc:
        raise_if_the_only_way_out(provider.unreached.values(), exc.first_causes)
        found = explain_unsatisfiable(
            exc.first_causes, provider, target, torch_problem, explain_torch
        )
        raise Unsatisfiable(
            f"no resolution found after {exc.conflicts} conflicts; the first was: {found.message}",
            conflicts=found.conflicts,
            hint="pin the packages named here, so that the search has fewer versions to try",
        ) from None
    except ResolutionTooDeep:
        raise Unsatisfiable(
            f"resolution did not finish within {MAX_ROUNDS} rounds",
            hint="pin the packages that backtrack (lockguard -v resolve shows them)",
        ) from None
    if files.missing_upload_times:
        warn(
            "exclude-newer could not be applied to files from "
            + ", ".join(sorted(files.missing_upload_times))
            + " (their index gives no upload times)"
        )
    for missed in lock_may_depend_on(provider.unreached.values(), result.criteria):
        warn(
            f"{unreached_text(missed)}; resolved without it, so the lock may differ from one made "
            "where that index can be reached"
        )
    chosen = {
        c.name: str(c.version) for c in result.mapping.values() if not c.extras and not c.absent
    }
    # a name the lock kept at its version was not "passed over": nothing newer was tried (outdated
    # and --upgrade-package are for that; the relock notes say what held an upgrade back)
    kept = {
        n
        for n, v in chosen.items()
        if preferences is not None and preferences.version(n) == Version(v)
    }
    considered = [r for r in direct if r.name not in kept]
    for report in newer_rejected(
        provider, watcher.rejected, considered, chosen, explain_torch, result.criteria
    ):
        # one line: the newest few, or with -v every one (never the summary twice)
        note(report.line(everything=everything))
    return _pins(result, target)


def merged_requirements(requirements: Sequence[str]) -> list[Req]:
    """The intent's requirements, each name once: repeats are dropped and the specifiers of one
    name are intersected (resolvelib merges requirements one by one, which is quadratic)."""
    merged: dict[tuple[str, str | None], Req] = {}
    for text in dict.fromkeys(requirements):
        req = Req.parse(text)
        key = (req.key, req.url)
        if key in merged and req.url is None:
            before = merged[key]
            merged[key] = Req(before.name, before.specifier & req.specifier, before.extras)
        else:
            merged.setdefault(key, req)
    return list(merged.values())


def _pins(result: Result[Req, Candidate, str], target: Target) -> PipResolution:
    parents: dict[str, set[str]] = {}
    constraints: dict[str, set[str]] = {}
    for key, criterion in result.criteria.items():
        name, _extras = split_key(key)
        for info in criterion.information:
            req = info.requirement
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
            req = info.requirement
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
        pins.append(
            Pin(
                name=candidate.name,
                version=str(candidate.version),
                index_url=candidate.index_url,
                files=candidate.files,
                via=tuple(
                    sorted(parents.get(candidate.name, {INTENT}), key=lambda p: (p != INTENT, p))
                ),
                dependencies=tuple(sorted(children.get(candidate.name, {}).items())),
                constraints=tuple(sorted(constraints.get(candidate.name, ()))),
            )
        )
    pins.sort(key=lambda p: p.name)
    return PipResolution(target.platform, tuple(pins), tuple(sorted(provided)))


def _unless_the_rest_clashes(
    provider: Provider,
    top: list[Req],
    causes: Iterable[Cause],
    target: Target,
    explain_torch: Callable[[SpecifierSet], str | None],
) -> None:
    """Exit 4 (SourceUnreachable) when the unreached PyTorch index was the way out, unless the
    rest of the intent clashes on its own: with `cuda = "11.8"` every torch build is on that
    index, so while it is down torch has no candidate and resolvelib stops there, before it meets
    `transformers==4.36.2` with `tokenizers>=0.20`, which fails whether or not the index answers
    (issue 31 §3). The requirements without the torch family are resolved once more to find out;
    a clash there that no torch requirement takes part in is the answer (exit 3)."""
    try:
        raise_if_the_only_way_out(provider.unreached.values(), causes)
    except SourceUnreachable as unreached:
        rest = [r for r in top if r.name not in FAMILY]
        if len(rest) == len(top):
            raise
        found: Unsatisfiable | None = None
        try:
            Resolver(provider, ConflictWatcher(provider, rest)).resolve(rest, max_rounds=MAX_ROUNDS)
        except (ResolutionImpossible, Decisive) as other:
            others = other.causes
            if not any(info.requirement.name in FAMILY for info in others):
                found = explain_unsatisfiable(
                    others,
                    provider,
                    target,
                    None,
                    explain_torch,
                    proof=other.lines if isinstance(other, Decisive) else None,
                )
        except (SearchExhausted, ResolutionTooDeep):
            pass  # no answer in time: the index stays the reason given
        if found is None:
            raise unreached from None
        raise found from None
