"""End an unsatisfiable resolution at its first decisive conflict, and bound the search.

resolvelib proves an intent unsatisfiable only by exhausting every combination: after torch 2.2
and torchvision 0.16 clash it backtracks through sympy and mpmath down to ancient sdists. This
reporter looks at each conflict as it happens and asks whether it is *decisive*: whether the
requirements that clash are forced by the intent (its own requirements, and the dependencies of
intent pins that have a single candidate), so that no backtracking can help:

- a forced requirement whose candidates are all gone (none exist, or each needs a package with
  no candidate at all, like outlines needing pyairports before an exclude-newer cut-off);
- a forced parent every one of whose candidates needs something of the conflicting name that no
  candidate satisfies together with the forced requirements on it (every torchvision==0.16.*
  needs torch 2.1.x; the intent asks for torch==2.2.*).

A conflict that is not decisive lets resolvelib backtrack as usual, up to a budget of conflicts.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TypeAlias

from packaging.version import Version
from resolvelib import BaseReporter
from resolvelib.resolvers import Criterion

from lockguard.resolve.candidates import Candidate
from lockguard.resolve.provider import Cause, Provider
from lockguard.resolve.requirements import PYTHON, Req, exact_version, fact
from lockguard.resolve.why_unsatisfiable import no_candidate, why_none

CHECKED_CONFLICTS = 40  # conflicts examined for a proof (each costs a few metadata reads)
MAX_CONFLICTS = 400  # the search gives up after this many conflicts
MAX_OPTIONS = 12  # a forced name with more candidates than this is not examined
MAX_FORCED = 300

Forced: TypeAlias = dict[str, list[Req]]


class Decisive(Exception):  # noqa: N818  (a signal, not an error)
    """The intent is unsatisfiable; `lines` say why, `causes` are resolvelib's for the rest."""

    def __init__(self, lines: list[str], causes: list[Cause]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines
        self.causes = causes


class SearchExhausted(Exception):  # noqa: N818
    def __init__(self, conflicts: int, first_causes: list[Cause]) -> None:
        super().__init__(f"{conflicts} conflicts")
        self.conflicts = conflicts
        self.first_causes = first_causes


@dataclass
class ConflictWatcher(BaseReporter[Req, Candidate, str]):
    provider: Provider
    top: list[Req]
    conflicts: int = 0
    first_causes: list[Cause] = field(default_factory=list)
    _forced: Forced | None = None
    # (name, version) -> why resolvelib rejected it: the information of the dependency that had no
    # candidate (resolve/rejections.py names the newer versions of a direct requirement with it)
    rejected: dict[tuple[str, Version], list[Cause]] = field(default_factory=dict)

    def rejecting_candidate(
        self, criterion: Criterion[Req, Candidate], candidate: Candidate
    ) -> None:
        self.rejected.setdefault((candidate.name, candidate.version), list(criterion.information))

    def resolving_conflicts(self, causes: Collection[Cause]) -> None:
        self.conflicts += 1
        if not self.first_causes:
            self.first_causes = list(causes)
        if self.conflicts <= CHECKED_CONFLICTS:
            lines = self._proof(list(causes))
            if lines:
                raise Decisive(lines, list(causes))
        if self.conflicts > MAX_CONFLICTS:
            raise SearchExhausted(self.conflicts, self.first_causes)

    # -- what the intent forces --------------------------------------------------------------------

    def forced(self) -> Forced:
        """identifier -> requirements that every resolution must meet: the intent's, and the
        dependencies of forced names that have exactly one candidate."""
        if self._forced is not None:
            return self._forced
        forced: Forced = {}
        for req in self.top:
            forced.setdefault(req.key, []).append(req)
        # an intent requirement with a single candidate is as forced as an exact pin (oldnccl 1.0 is
        # the only oldnccl: its nvidia-nccl-cu11, and the wheels that clashes with, are forced too)
        queue = [r.key for r in self.top if not r.constraint_only]
        done: set[str] = set()
        while queue and len(forced) < MAX_FORCED:
            key = queue.pop(0)
            if key in done:
                continue
            done.add(key)
            options = self._options(key, forced[key], limit=2)
            if (
                len(options) != 1
                or options[0].best_file is None
                or not options[0].best_file.is_wheel
            ):
                continue
            for dep in self.provider.get_dependencies(options[0]):
                if dep.name == PYTHON:
                    continue
                forced.setdefault(dep.key, []).append(dep)
                if not dep.constraint_only and exact_version(dep.specifier):
                    queue.append(dep.key)
        self._forced = forced
        return forced

    def _options(self, key: str, reqs: list[Req], limit: int = MAX_OPTIONS + 1) -> list[Candidate]:
        """Candidates that meet `reqs` (an sdist counts without being built: a proof never
        builds)."""
        out: list[Candidate] = []
        for candidate in self.provider.candidates_matching(key, reqs):
            if candidate.absent:
                continue
            out.append(candidate)
            if len(out) >= limit:
                break
        return out

    # -- proofs ----------------------------------------------------------------------------------

    def _proof(self, causes: list[Cause]) -> list[str] | None:
        forced = self.forced()
        for key in dict.fromkeys(c.requirement.key for c in causes):
            if key == PYTHON:
                continue
            if key in forced:
                lines = self._dead_name(key, forced[key], forced)
                if lines:
                    return lines
            parents = {
                c.parent.key for c in causes if c.parent is not None and c.requirement.key == key
            }
            for parent in sorted(parents):
                if parent in forced:
                    lines = self._dead_parent(parent, key, forced) or self._dead_name(
                        parent, forced[parent], forced
                    )
                    if lines:
                        return lines
        return None

    def _dead_name(self, key: str, reqs: list[Req], forced: Forced) -> list[str] | None:
        if all(r.constraint_only for r in reqs):
            return None  # constraints alone do not make the name required: it may stay out
        options = self._options(key, reqs)
        if len(options) > MAX_OPTIONS:
            return None
        asked = _asked(key, reqs)
        if not options:
            return [asked, no_candidate(key)]
        why = [self._dead(c, forced) for c in options]
        if all(why):
            return [asked, _every(key, options, why)]
        return None

    def _dead_parent(self, parent: str, key: str, forced: Forced) -> list[str] | None:
        options = self._options(parent, forced[parent])
        if (
            not options
            or len(options) > MAX_OPTIONS
            or not all(o.best_file and o.best_file.is_wheel for o in options)
        ):
            return None
        needs: list[str] = []
        rules: list[str] = []
        for option in options:
            mine = [d for d in self.provider.get_dependencies(option) if d.key == key]
            if not mine:
                return None  # this option does not need the name at all
            together = forced.get(key, []) + mine
            if all(r.constraint_only for r in together):
                return None  # nothing requires the name: it may stay out
            matches = self._options(key, together)
            if matches and not all(self._dead(c, forced) for c in matches):
                return None
            needs.append(
                f"{option.name} {option.version} needs "
                f"{_specs([d for d in mine if d.specifier] or mine)}"
            )
            rules += [
                fact(d, d.by or f"{option.name} {option.version}")
                for d in mine
                if d.constraint_only and d.why and d.local is None
            ]  # pairing is implied by the pins
        shown = {r.split(" [", 1)[-1]: r for r in rules}  # one line per rule, not per version
        wanted = {need.split(" needs ", 1)[1] for need in needs}
        if len(options) == 1:
            lines = [f"{needs[0]} (the only {parent} that {_allowed(forced[parent])} allows)"]
        elif len(wanted) == 1:
            # each needs the same: said once, with the rule behind it when one rule is
            lines = [
                f"every {parent} that {_allowed(forced[parent])} allows "
                f"({_versions(options)}) needs {next(iter(wanted))}"
                + (f" [{next(iter(shown))}" if len(shown) == 1 else "")
            ]
            if len(shown) == 1:
                shown = {}
        else:
            lines = [
                f"every {parent} that {_allowed(forced[parent])} allows "
                f"({_versions(options)}) needs "
                f"{_summary(key, options, self.provider)}: {'; '.join(needs)}"
            ]
        if forced.get(key):
            lines.append(_asked(key, forced[key]))
        return lines + [r for r in shown.values() if r not in lines]

    def _dead(self, candidate: Candidate, forced: Forced) -> str | None:
        """Why a candidate can never be installed (a dependency with no candidate), or None."""
        if candidate.best_file is None or not candidate.best_file.is_wheel:
            return None  # its metadata would need a build: no proof
        deps = self.provider.get_dependencies(candidate)
        for dep in deps:
            if dep.name == PYTHON or dep.constraint_only:
                continue
            own = [
                d for d in deps if d.constraint_only and d.key == dep.key
            ]  # knowledge rules it carries
            if not self._options(dep.key, forced.get(dep.key, []) + own + [dep], limit=1):
                if own and self._options(dep.key, forced.get(dep.key, []) + [dep], limit=1):
                    rules = "; ".join(dict.fromkeys(fact(r, r.by or "knowledge") for r in own))
                    return f"needs {dep.key}{dep.specifier or ''}, but {rules}"
                return (
                    f"needs {dep.key}{dep.specifier or ''}, which has no candidate"
                    + self._why_none(dep.name)
                )
        return None

    def _why_none(self, name: str) -> str:
        return f" ({why_none(name, self.provider, self.provider.context.target)})"


def _asked(key: str, reqs: list[Req]) -> str:
    parts = list(
        dict.fromkeys(
            fact(req, req.by or (req.parent.replace("==", " ") if req.parent else "the intent"))
            for req in reqs
        )
    )
    # "torch 2.1.2 needs numpy" says nothing next to "torch 2.1.2 needs numpy<2 [knowledge]"
    return "; ".join(p for p in parts if not any(_narrows(q, p) for q in parts))


def _narrows(fact_text: str, bare: str) -> bool:
    """Is `fact_text` the same asker's need for the same name, with a specifier `bare` lacks?"""
    return fact_text != bare and fact_text.startswith(bare) and fact_text[len(bare)] in "<>=!~ ["


def _allowed(reqs: list[Req]) -> str:
    """'the intent (torchvision==0.16.*)' / 'vllm 0.6.3.post1 (outlines<0.1,>=0.0.43)'."""
    parts = []
    for req in reqs:
        if req.constraint_only and req.local is not None and not req.specifier:
            continue  # torch's pairing with torchvision: the pins say it
        who = req.by or (req.parent.replace("==", " ") if req.parent else "the intent")
        parts.append(f"{who} ({req.key}{req.specifier or ''})")
    return " and ".join(dict.fromkeys(parts))


def _specs(reqs: list[Req]) -> str:
    return ", ".join(dict.fromkeys(f"{r.key}{r.specifier or ''}" for r in reqs))


def _versions(options: list[Candidate]) -> str:
    versions = sorted(str(o.version) for o in options)
    return (
        ", ".join(versions)
        if len(versions) <= 4
        else f"{versions[0]} to {versions[-1]} ({len(versions)} versions)"
    )


def _every(key: str, options: list[Candidate], why: list[str | None]) -> str:
    reasons = list(dict.fromkeys(w for w in why if w))
    return (
        f"every candidate of {key} ({_versions(options)}) "
        f"{reasons[0] if len(reasons) == 1 else '; '.join(reasons)}"
    )


def _summary(key: str, options: list[Candidate], provider: Provider) -> str:
    """'torch 2.1.x' when every option pins the same minor release, else the name."""
    minors = set()
    for option in options:
        for dep in provider.get_dependencies(option):
            if dep.key == key and not dep.constraint_only:
                exact = exact_version(dep.specifier)
                if not exact:
                    return key
                minors.add(".".join(exact.split("+")[0].split(".")[:2]))
    return f"{key} {minors.pop()}.x" if len(minors) == 1 else key
