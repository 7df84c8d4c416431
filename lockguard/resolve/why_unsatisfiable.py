"""Why the pip side has no solution: a chain of facts, never resolvelib's repr. (Why a locked
package is at its version, `lockguard explain`, is check/why_pinned.py.)

Each line is one fact with where it comes from: what the intent or a package needs, what the
knowledge allows (the rule and its file:line), why a name has no candidate (no project, no file
for the target, nothing before the exclude-newer cut-off), and which sdists could not be built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from packaging.specifiers import SpecifierSet

from lockguard.errors import UnknownProject
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.target import Target
from lockguard.resolve.candidates import Candidate, CandidateFilter, ProjectVersions
from lockguard.resolve.provider import Cause, Provider
from lockguard.resolve.requirements import PYTHON, Req, fact

HINT = "relax one of these requirements, or change cuda/python in the intent"


def explain_unsatisfiable(
    causes: Iterable[Cause],
    provider: Provider,
    target: Target,
    torch_problem: Unsatisfiable | None,
    explain_torch: Callable[[SpecifierSet], str | None],
    proof: list[str] | None = None,
) -> Unsatisfiable:
    lines: list[str] = list(proof or [])
    # each line of a proof names its own sources (the intent, a package, a knowledge rule)
    conflicts = [Conflict(line) for line in lines]
    names: list[str] = []
    asked: dict[str, list[Req]] = {}
    for info in causes:
        asked.setdefault(info.requirement.name, []).append(info.requirement)
        req: Req = info.requirement
        if req.name == "torch" and torch_problem is None:
            reason = explain_torch(req.specifier)
            if reason:
                torch_problem = Unsatisfiable(reason)
        if not proof:
            fact = requirement_fact(req, info.parent)
            if fact not in lines:
                lines.append(fact)
                source = (
                    "command line"
                    if (req.by or "").startswith("--")
                    else "knowledge"
                    if req.by
                    else "intent"
                    if info.parent is None
                    else "package metadata"
                )
                conflicts.append(Conflict(fact, source))
        if req.name not in names:
            names.append(req.name)
    for name in names:
        notes = why_few(name, provider, target, torch_problem)
        # "no release before the cut-off" is false when older releases exist: the one asked for
        # came after it, and when, is the fact (torch==2.9.1 with exclude-newer 2025-10-01)
        cut = f"{name} has no release before exclude-newer"
        if any(note.startswith(cut) for note in notes) and _released_before_cutoff(
            name, provider, target
        ):
            after = _after_cutoff(name, asked[name], provider, target)
            if after:
                notes = [after[0] if note.startswith(cut) else note for note in notes]
        # a rule that allows none says why
        excluded = any(str(r.specifier) == "<0" for r in asked[name])
        if (
            not notes
            and not excluded
            and name != PYTHON
            and not provider.candidates_of(name, asked[name])
        ):
            notes = _after_cutoff(name, asked[name], provider, target)
            if not notes:
                notes = [_no_version(name, asked[name], provider)]
                _alone_in_the_intent(name, asked[name], provider, notes[0])
            # the proof's shorter words for the same fact
            proof_line = no_candidate(name)
            if proof_line in lines:
                conflicts = [c for c in conflicts if c.fact != proof_line]
                lines.remove(proof_line)
        for note in notes:
            if note not in lines:
                lines.append(note)
                conflicts.append(Conflict(note, "knowledge" if name == "torch" else "index"))
    # a candidate skipped because its sdist could not be built might have been the answer
    skipped = [f"{key} was skipped: {exc.message}" for key, exc in provider.build_failures.items()]
    if len(skipped) > 3:
        skipped = skipped[:3] + [f"and {len(skipped) - 3} more sdists could not be built"]
    for note in skipped:
        lines.append(note)
        conflicts.append(Conflict(note, "sdist build"))
    _build_failure_is_the_answer(causes, provider)
    _unknown_project_is_the_answer(causes, provider)
    cut_off = any("after exclude-newer" in line for line in lines)
    hint = (HINT + ", or move exclude-newer past the upload it needs") if cut_off else HINT
    cooled = [n for n in names if provider.files.cutoff(n).span and _cooled(n, lines)]
    if cooled:  # a cooldown: the exemption is the way out for the one package that needs it
        hint += f" (exempt it: exclude-newer-package = {{ {cooled[0]} = false }})"
    return Unsatisfiable("; ".join(lines), conflicts=conflicts, hint=hint)


def _cooled(name: str, lines: list[str]) -> bool:
    return any(line.startswith(f"{name} ") and "cooldown)" in line for line in lines)


def no_candidate(name: str) -> str:
    """What a proof says when nothing meets the forced requirements of a name (the explanation
    replaces it with the versions the index has)."""
    return f"no candidate of {name} satisfies them all"


def _no_version(name: str, reqs: list[Req], provider: Provider) -> str:
    """'no version of numpy matches >=2 and <2 at once (the index has 2.4.6, 1.26.4)'."""
    found = [str(c.version) for c in provider.candidates_of(name)][:5]
    specifiers = [str(s) for r in reqs for s in r.specifier]
    within = " and ".join(dict.fromkeys(specifiers)) or "allowed"
    at_once = " at once" if len(set(specifiers)) > 1 else ""
    return (
        f"no version of {name} matches {within}{at_once} (the index has {', '.join(found)}"
        f"{', ...' if len(found) == 5 else ''})"
    )


def _alone_in_the_intent(name: str, reqs: list[Req], provider: Provider, note: str) -> None:
    """A requirement of the intent that no release meets, with nothing else asking for the name
    (`transformers==99.0`): the intent's line is the one to change, not cuda or python."""
    if not reqs or any(r.by or r.constraint_only or r.parent for r in reqs):
        return
    if provider.build_failures or not provider.candidates_of(name):
        return
    newest = max(c.version for c in provider.candidates_of(name))
    raise Unsatisfiable(
        note,
        conflicts=[Conflict(fact(r, "the intent"), "intent") for r in reqs]
        + [Conflict(note, "index")],
        hint=f"change the requirement (the newest {name} the index has for this target is "
        f"{newest})",
        requirement=name,
    )


def _unknown_project_is_the_answer(causes: Iterable[Cause], provider: Provider) -> None:
    """An intent requirement that no index knows is bad input (exit 2 naming the intent's line),
    not a conflict to relax."""
    for info in causes:
        req: Req = info.requirement
        if (
            info.parent is None
            and not req.by
            and not req.constraint_only
            and req.name != PYTHON
            and not provider.source.projects(req.name)
        ):
            raise UnknownProject(req.name, str(req))


def requirement_fact(req: Req, parent: Candidate | None) -> str:
    return fact(
        req, req.by or (f"{parent.name} {parent.version}" if parent is not None else "the intent")
    )


def _build_failure_is_the_answer(causes: Iterable[Cause], provider: Provider) -> None:
    """An intent requirement whose every candidate failed to build: that failure is the answer
    (exit 2, with the [[dependency-metadata]] hint), not an unsatisfiable intent."""
    for info in causes:
        req: Req = info.requirement
        if info.parent is not None or req.constraint_only:
            continue
        options = provider.candidates_of(req.name, [req])
        failed = [
            f for f in (provider.build_failures.get(f"{c.name} {c.version}") for c in options) if f
        ]
        if options and len(failed) == len(options):
            raise failed[0]


def why_few(
    name: str, provider: Provider, target: Target, torch_problem: Unsatisfiable | None
) -> list[str]:
    if name == PYTHON:
        return [f"the target Python is {target.python}"]
    if name == "torch" and torch_problem is not None:
        return [torch_problem.message]
    if name in provider.context.conda_provided:
        return [f"{name} is installed by the conda side at {provider.context.conda_provided[name]}"]
    candidates = provider.candidates_of(name)
    if not candidates:
        return [why_none(name, provider, target)] + (_cut_off(provider) if name == "torch" else [])
    if name == "torch" and provider.context.torch_builds is not None:
        allowed = ", ".join(b.version for b in provider.context.torch_builds[:6])
        return [f"the CUDA stack allows torch {allowed}"] + _cut_off(provider)
    return []


def _after_cutoff(name: str, reqs: list[Req], provider: Provider, target: Target) -> list[str]:
    """The versions the requirements allow that exclude-newer alone removed, with their upload
    dates: `transformers==4.36.0` and a cut-off of 2023-12-01 is that cut-off, not a clash."""
    cutoff = provider.files.cutoff(name).at
    if cutoff is None:
        return []
    untimed = CandidateFilter(target, None)
    for project in provider.source.projects(name):
        versions = ProjectVersions(project, untimed)
        for version in versions.versions:
            candidate = versions.candidate(version)
            if candidate is None or not all(
                r.url or r.specifier.contains(version, prereleases=True) for r in reqs
            ):
                continue
            uploaded = sorted(f.upload_time for f in candidate.files if f.upload_time)
            when = f" on {uploaded[0][:10]}" if uploaded else ""
            return [
                f"{name} {version} was uploaded{when}, after {provider.files.cutoff_label(name)}"
            ]
    return []


def _released_before_cutoff(name: str, provider: Provider, target: Target) -> bool:
    """Whether any file of `name` for the target was uploaded before exclude-newer."""
    cutoff = provider.files.cutoff(name).at
    if cutoff is None:
        return False
    stamp = cutoff.isoformat().replace("+00:00", "Z")
    untimed = CandidateFilter(target, None)
    for project in provider.source.projects(name):
        versions = ProjectVersions(project, untimed)
        for version in versions.versions:
            candidate = versions.candidate(version)
            uploaded = (
                [f.upload_time for f in candidate.files if f.upload_time] if candidate else []
            )
            if uploaded and min(uploaded) < stamp:
                return True
    return False


def _cut_off(provider: Provider) -> list[str]:
    """The index-only torch builds the cut-off excluded (by their release date, from the
    knowledge)."""
    cut = list(provider.after_cutoff.values())
    cutoff = provider.files.cutoff("torch").at
    if not cut or cutoff is None:
        return []
    dates = sorted({b.released or "" for b in cut})  # after the cut-off: each has its release date
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    labels = ", ".join(dict.fromkeys(b.label for b in cut))
    return [
        f"{labels} (PyTorch index builds) came out {when}, after "
        f"{provider.files.cutoff_label('torch')}"
    ]


def why_none(name: str, provider: Provider, target: Target) -> str:
    """Why a name has no candidate at all: no project, no file for the target, or the cut-off."""
    projects = provider.source.projects(name)
    if not projects:
        return f"no index has a project named {name}"
    files: CandidateFilter = provider.files
    if files.cutoff(name).at is not None:
        untimed = CandidateFilter(target, None)
        for project in projects:
            versions = ProjectVersions(project, untimed)
            if any(versions.candidate(v) for v in versions.versions):
                return f"{name} has no release before {files.cutoff_label(name)}"
    return f"no file of {name} fits {target.platform} with Python {target.python}"
