"""The resolvelib provider: target-correct candidates, knowledge constraints, conda-provided names.

Knowledge enters in three ways: torch's candidates are limited to the versions the CUDA stack
allows (with their local label when they come from the PyTorch index); hazard rules add
*constraints* to the candidate they concern (numpy<2 for torch<2.3 on Linux) that bound a version
without installing anything; and names the conda side installs have exactly one candidate.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from resolvelib import AbstractProvider

from lockguard.knowledge.tables import Hazard
from lockguard.model.target import Target
from lockguard.resolve.candidates import Candidate, CandidateFilter, ProjectVersions
from lockguard.resolve.ports import PackageSource
from lockguard.resolve.requirements import PYTHON, Req, exact_version, split_key


@dataclass
class ProviderContext:
    """Everything the provider knows besides the package source."""

    target: Target
    torch_versions: list[Version] | None = None  # None: no CUDA-stack limit
    hazards: Sequence[Hazard] = ()
    conda_provided: dict[str, Version] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)  # name -> why its candidates are few


class Provider(AbstractProvider):
    def __init__(self, source: PackageSource, files: CandidateFilter, context: ProviderContext) -> None:
        self.source = source
        self.files = files
        self.context = context
        self.environment = context.target.marker_environment()
        self._projects: dict[str, list[ProjectVersions]] = {}
        self._dependencies: dict[tuple[str, Version, frozenset[str]], list[Req]] = {}

    # -- resolvelib interface --------------------------------------------------------------------

    def identify(self, requirement_or_candidate) -> str:
        return requirement_or_candidate.key

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        infos = list(information[identifier])
        pinned = any(exact_version(i.requirement.specifier) for i in infos)
        causes = {c.requirement.name for c in backtrack_causes}
        name, _extras = split_key(identifier)
        # conflicts first, then exact pins, then the CUDA stack (torch), then the rest by name
        return (name not in causes, not pinned, name != "torch", identifier)

    def find_matches(self, identifier: str, requirements: Mapping[str, Iterable[Req]],
                     incompatibilities: Mapping[str, Iterable[Candidate]]):
        name, extras = split_key(identifier)
        reqs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        pinned = {v for v in (exact_version(r.specifier) for r in reqs) if v}
        allow_pre = any(r.specifier.prereleases for r in reqs)
        only_constraints = all(r.constraint_only for r in reqs)

        def fits(candidate: Candidate) -> bool:
            if candidate.yanked and str(candidate.version) not in pinned:
                return False
            return all(self._satisfies(r, candidate) for r in reqs)

        def matches():
            # PEP 440: pre-releases only when a requirement names one, or when nothing else fits
            if only_constraints:
                yield Candidate(name, Version("0"), absent=True)
            found_final = False
            for candidate in self._iter_candidates(name, bad, reqs):
                if candidate.version.is_prerelease and not allow_pre:
                    continue
                if fits(candidate):
                    if not found_final and candidate.best_file is not None:
                        self.source.prefetch_metadata(candidate.name, str(candidate.version), candidate.best_file)
                    found_final = True
                    yield candidate.with_extras(extras) if extras else candidate
            if not found_final and not allow_pre:
                for candidate in self._iter_candidates(name, bad, reqs):
                    if candidate.version.is_prerelease and fits(candidate):
                        yield candidate.with_extras(extras) if extras else candidate

        return matches  # a factory: resolvelib iterates it lazily, as often as it needs

    def is_satisfied_by(self, requirement: Req, candidate: Candidate) -> bool:
        if candidate.absent:
            return requirement.constraint_only
        return self._satisfies(requirement, candidate)

    def get_dependencies(self, candidate: Candidate) -> list[Req]:
        if candidate.absent or candidate.provided_by or candidate.name == PYTHON:
            return []
        key = (candidate.name, candidate.version, candidate.extras)
        if key not in self._dependencies:
            self._dependencies[key] = self._compute_dependencies(candidate)
        deps = self._dependencies[key]
        self.source.prefetch_projects(sorted({d.name for d in deps if d.name != PYTHON}))
        return deps

    # -- candidates ------------------------------------------------------------------------------

    def _iter_candidates(self, name: str, bad: set[Version], reqs: list[Req]):
        """Candidates newest first (torch: in CUDA-stack order); files are checked only for the
        versions every requirement's specifier accepts."""
        special = self._special_candidates(name)
        if special is not None:
            yield from (c for c in special if c.version not in bad)
            return
        for versions in self._project_versions(name):
            order = self._stack_order(name, versions.versions)
            for version in order:
                if version in bad:
                    continue
                if not all(r.url or r.specifier.contains(version, prereleases=True) for r in reqs):
                    continue
                candidate = versions.candidate(version)
                if candidate is not None:
                    yield candidate

    def candidates_of(self, name: str) -> list[Candidate]:
        """Every candidate of a name (explanations only: this evaluates every version)."""
        return list(self._iter_candidates(name, set(), []))

    def _special_candidates(self, name: str) -> list[Candidate] | None:
        if name == PYTHON:
            python = self.context.target.python
            return [Candidate(PYTHON, Version(f"{python.major}.{python.minor}"), provided_by="target")]
        if name in self.context.conda_provided:
            return [Candidate(name, self.context.conda_provided[name], provided_by="conda")]
        return None

    def _project_versions(self, name: str) -> list[ProjectVersions]:
        if name not in self._projects:
            self._projects[name] = [ProjectVersions(p, self.files) for p in self.source.projects(name)]
        return self._projects[name]

    def _stack_order(self, name: str, versions: list[Version]) -> list[Version]:
        if name != "torch" or self.context.torch_versions is None:
            return versions
        present = set(versions)
        return [v for v in self.context.torch_versions if v in present]

    def _satisfies(self, req: Req, candidate: Candidate) -> bool:
        if req.name != candidate.name:
            return False
        if req.url:
            return any(f.url.split("#")[0] == req.url.split("#")[0] for f in candidate.files)
        return req.specifier.contains(candidate.version, prereleases=True if candidate.provided_by else None)

    # -- dependencies ----------------------------------------------------------------------------

    def _compute_dependencies(self, candidate: Candidate) -> list[Req]:
        parent = f"{candidate.name}=={candidate.version}"
        deps: list[Req] = []
        if candidate.extras:
            # name[extra] depends on name at the same version, plus the extra's requirements
            deps.append(Req(candidate.name, SpecifierSet(f"=={candidate.version}"), parent=parent))
        metadata = self.source.metadata(candidate.name, str(candidate.version), candidate.best_file)
        if metadata.requires_python:
            with contextlib.suppress(InvalidSpecifier):  # a malformed Requires-Python: pip ignores it too
                deps.append(Req(PYTHON, SpecifierSet(metadata.requires_python), parent=parent))
        for text in metadata.requires_dist:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue  # a broken line in someone's METADATA: pip skips it too
            if not self._marker_holds(requirement.marker, candidate.extras):
                continue
            req = Req(canonicalize_name(requirement.name), requirement.specifier,
                      frozenset(canonicalize_name(e) for e in requirement.extras), requirement.url, parent)
            if candidate.extras and not _mentions_extra(requirement.marker):
                continue  # the base candidate brings those
            deps.append(req)
        if not candidate.extras:
            deps += self._hazard_constraints(candidate, parent)
        return deps

    def _marker_holds(self, marker: Marker | None, extras: frozenset[str]) -> bool:
        if marker is None:
            return True
        if not extras:
            return marker.evaluate({**self.environment, "extra": ""})
        return any(marker.evaluate({**self.environment, "extra": extra}) for extra in extras)

    def _hazard_constraints(self, candidate: Candidate, parent: str) -> list[Req]:
        out = []
        for hazard in self.context.hazards:
            if hazard.applies(candidate.name, str(candidate.version), self.context.target.platform):
                constrain = hazard.constrain
                out.append(Req(canonicalize_name(constrain.name), constrain.specifier, parent=parent,
                               constraint_only=True, why=f"knowledge: {hazard.id}, {hazard.origin}"))
        return out


def _mentions_extra(marker: Marker | None) -> bool:
    return marker is not None and "extra" in str(marker)
