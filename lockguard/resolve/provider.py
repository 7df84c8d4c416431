"""The resolvelib provider: target-correct candidates, knowledge constraints, conda-provided names.

Knowledge enters in four ways: torch's candidates are limited to the builds the CUDA stack allows
(PyPI's own, or a PyTorch index variant fetched only when the resolver reaches such a build);
torchvision and torchaudio pair with torch's build; hazard rules add *constraints* to the
candidate they concern (numpy<2 for torch<2.3 on Linux) that bound a version without installing
anything; name rules (CUDA component wheels bound to the intent's CUDA, a GPU rule that excludes a
package) constrain a name wherever it is required. Names the conda side installs have exactly one
candidate.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from resolvelib import AbstractProvider
from resolvelib.structs import RequirementInformation

from lockguard.errors import BuildFailed, SourceUnreachable
from lockguard.knowledge.tables import Hazard
from lockguard.model.target import Target
from lockguard.resolve.candidates import Candidate, CandidateFilter, ProjectVersions
from lockguard.resolve.dependency_order import fastest_first
from lockguard.resolve.ports import PackageSource
from lockguard.resolve.preferences import Preferences
from lockguard.resolve.requirements import PYTHON, Req, exact_version, parse_requirement, split_key
from lockguard.resolve.torch_builds import (
    PAIRED,
    TorchBuild,
    index_urls,
    label_of,
    released_after_cutoff,
)

MAX_FAILED_BUILDS = 3

# one requirement and the candidate that brought it (None: the intent); a string, because
# resolvelib defines the generic class for type checkers only (a namedtuple at run time)
Cause: TypeAlias = "RequirementInformation[Req, Candidate]"


@dataclass
class ProviderContext:
    """Everything the provider knows besides the package source."""

    target: Target
    torch_builds: list[TorchBuild] | None = None  # None: no CUDA-stack limit
    hazards: Sequence[Hazard] = ()
    conda_provided: dict[str, Version] = field(default_factory=dict)
    name_rules: Callable[[str], list[Req]] = lambda _name: []  # knowledge constraints on a name
    preferences: Preferences | None = None  # the existing lock's versions, tried first

    @property
    def torch_versions(self) -> list[Version] | None:
        return (
            None if self.torch_builds is None else [Version(b.version) for b in self.torch_builds]
        )


@dataclass
class Unreached:
    """A PyTorch index variant that could not be reached, and the builds that needed it."""

    index_url: str
    error: SourceUnreachable
    builds: list[TorchBuild] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


class Provider(AbstractProvider[Req, Candidate, str]):
    def __init__(
        self, source: PackageSource, files: CandidateFilter, context: ProviderContext
    ) -> None:
        self.source = source
        self.files = files
        self.context = context
        self.environment = context.target.marker_environment()
        self._projects: dict[str, list[ProjectVersions]] = {}
        self._index_pages: dict[tuple[str, str], ProjectVersions | None] = {}
        self._dependencies: dict[tuple[str, Version, frozenset[str]], list[Req]] = {}
        self._rules: dict[str, list[Req]] = {}
        self.unreached: dict[str, Unreached] = {}  # index url -> what it would have served
        self.build_failures: dict[str, BuildFailed] = {}  # "name version" -> why it was skipped
        self.after_cutoff: dict[
            str, TorchBuild
        ] = {}  # index-only builds released after exclude-newer
        self._builds = {Version(b.version): b for b in context.torch_builds or ()}
        self._labels = index_urls(context.torch_builds)

    # -- resolvelib interface --------------------------------------------------------------------

    def identify(self, requirement_or_candidate: Req | Candidate) -> str:
        return requirement_or_candidate.key

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[Cause]],
        backtrack_causes: Sequence[Cause],
    ) -> tuple[bool, bool, bool, str]:
        infos = list(information[identifier])
        pinned = any(exact_version(i.requirement.specifier) for i in infos)
        causes = {c.requirement.name for c in backtrack_causes}
        name, _extras = split_key(identifier)
        # conflicts first, then exact pins, then the CUDA stack (torch), then the rest by name
        return (name not in causes, not pinned, name != "torch", identifier)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterable[Req]],
        incompatibilities: Mapping[str, Iterable[Candidate]],
    ) -> Callable[[], Iterator[Candidate]]:
        name, extras = split_key(identifier)
        reqs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        pinned = {v for v in (exact_version(r.specifier) for r in reqs) if v}
        allow_pre = any(r.specifier.prereleases for r in reqs)
        only_constraints = all(r.constraint_only for r in reqs)

        def fits(candidate: Candidate) -> bool:
            # a yanked release is taken only when pinned exactly (PEP 592), or kept when locked
            if (
                candidate.yanked
                and str(candidate.version) not in pinned
                and not self._preferred(candidate)
            ):
                return False
            return all(self._satisfies(r, candidate) for r in reqs)

        def usable(candidate: Candidate) -> bool:
            # an sdist-only candidate is built (its metadata) only once everything else says yes
            best = candidate.best_file
            return best is None or best.is_wheel or self._builds_ok(candidate)

        def matches() -> Iterator[Candidate]:
            # PEP 440: pre-releases only when a requirement names one, or when nothing else fits
            if only_constraints:
                yield Candidate(name, Version("0"), absent=True)
            found_final = False
            for candidate in self._iter_candidates(name, bad, reqs):
                if candidate.version.is_prerelease and not allow_pre:
                    continue
                if fits(candidate) and usable(candidate):
                    if not found_final and candidate.best_file is not None:
                        self.source.prefetch_metadata(
                            candidate.name, str(candidate.version), candidate.best_file
                        )
                    found_final = True
                    yield candidate.with_extras(extras) if extras else candidate
            if not found_final and not allow_pre:
                for candidate in self._iter_candidates(name, bad, reqs):
                    if candidate.version.is_prerelease and fits(candidate) and usable(candidate):
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
        self.source.prefetch_projects(
            sorted({d.name for d in deps if d.name != PYTHON and not d.constraint_only})
        )
        return deps

    # -- candidates ------------------------------------------------------------------------------

    def _iter_candidates(
        self, name: str, bad: set[Version], reqs: list[Req]
    ) -> Iterator[Candidate]:
        """Candidates newest first (torch: in CUDA-stack order); files are checked only for the
        versions every requirement's specifier accepts. Sdist-only versions older than a version
        with a wheel for the target come last (an old sdist is slow to build and rarely right)."""
        special = self._special_candidates(name)
        if special is not None:
            yield from (c for c in special if c.version not in bad)
            return

        def accept(version: Version) -> bool:
            return version not in bad and all(
                r.url or r.specifier.contains(version, prereleases=True) for r in reqs
            )

        preferred = self.context.preferences.version(name) if self.context.preferences else None
        if preferred is not None and accept(preferred):
            # the locked version first, wherever it stands (resolvelib takes the first that fits)
            first = next(self._ordered(name, reqs, lambda version: version == preferred), None)
            if first is not None:
                yield first
                accept_rest = accept

                def accept(version: Version) -> bool:
                    return version != preferred and accept_rest(version)

        deferred: list[Candidate] = []
        seen_wheel = False
        for candidate in self._ordered(name, reqs, accept):
            best = candidate.best_file
            wheel = best is not None and best.is_wheel
            if not wheel and seen_wheel:
                deferred.append(candidate)
                continue
            seen_wheel = seen_wheel or wheel
            yield candidate
        yield from deferred

    def _ordered(
        self, name: str, reqs: list[Req], accept: Callable[[Version], bool]
    ) -> Iterator[Candidate]:
        if name == "torch" and self.context.torch_builds is not None:
            yield from self._torch_candidates(accept)
            return
        if name in PAIRED and self.context.torch_builds is not None:
            yield from self._paired_candidates(name, reqs, accept)
            return
        for versions in self._project_versions(name):
            for version in versions.versions:
                if accept(version):
                    candidate = versions.candidate(version)
                    if candidate is not None:
                        yield candidate

    def _torch_candidates(self, accept: Callable[[Version], bool]) -> Iterator[Candidate]:
        """torch in the CUDA stack's order, each build from where it is published; a PyTorch
        index variant is fetched only when the resolver reaches a build that needs it."""
        for build in self.context.torch_builds or ():
            version = Version(build.version)
            if not accept(version):
                continue
            if build.index_url is not None and released_after_cutoff(
                build, self.files.cutoff("torch").at
            ):
                # never asked for: no answer of it counts
                self.after_cutoff.setdefault(build.version, build)
                continue
            if build.index_url is None:
                pages = self._project_versions("torch")
            else:
                page = self._index_page("torch", build.index_url, build)
                pages = [page] if page else []
            for versions in pages:
                candidate = versions.candidate(version) if version in versions.versions else None
                if candidate is not None:
                    yield candidate
                    break

    def _paired_candidates(
        self, name: str, reqs: list[Req], accept: Callable[[Version], bool]
    ) -> Iterator[Candidate]:
        """torchvision/torchaudio from where torch's build comes: PyPI's for PyPI's torch, the same
        index variant for a `+cu118` torch; with no torch decided yet, PyPI's first."""
        wanted = {r.local for r in reqs if r.local is not None}
        labels = list(dict.fromkeys([""] + list(self._labels))) if not wanted else sorted(wanted)
        for label in labels:
            if label == "":
                pages = self._project_versions(name)
            elif label in self._labels:
                page = self._index_page(name, self._labels[label], None)
                pages = [page] if page else []
            else:
                pages = []
            for versions in pages:
                for version in versions.versions:
                    if label_of(version) != label or not accept(version):
                        continue
                    candidate = versions.candidate(version)
                    if candidate is not None:
                        yield candidate

    def _index_page(
        self, name: str, index_url: str, build: TorchBuild | None
    ) -> ProjectVersions | None:
        key = (name, index_url)
        if key not in self._index_pages:
            if index_url in self.unreached:
                self._index_pages[key] = None
            else:
                try:
                    project = self.source.index_project(name, index_url)
                except SourceUnreachable as exc:
                    self.unreached[index_url] = Unreached(index_url, exc)
                    project = None
                self._index_pages[key] = ProjectVersions(project, self.files) if project else None
        if self._index_pages[key] is None and index_url in self.unreached:
            missed = self.unreached[index_url]
            missed.names.add(name)
            if build is not None and build not in missed.builds:
                missed.builds.append(build)
        return self._index_pages[key]

    def _builds_ok(self, candidate: Candidate) -> bool:
        """An sdist-only candidate whose metadata cannot be built is skipped, and remembered;
        after MAX_FAILED_BUILDS failures of one project its other sdists are not tried."""
        best = candidate.best_file
        if best is None:
            return True  # nothing to build
        failed = sum(1 for key in self.build_failures if key.split(" ")[0] == candidate.name)
        if failed >= MAX_FAILED_BUILDS:
            return False
        try:
            self.source.metadata(candidate.name, str(candidate.version), best)
        except BuildFailed as exc:
            self.build_failures[f"{candidate.name} {candidate.version}"] = exc
            return False
        return True

    def candidates_matching(self, identifier: str, reqs: Sequence[Req]) -> Iterator[Candidate]:
        """Candidates of an identifier that every requirement accepts, lazily, building nothing
        (for proofs: find_matches without its side effects)."""
        name, extras = split_key(identifier)
        reqs = list(reqs)
        allow_pre = any(r.specifier.prereleases for r in reqs)
        pinned = {v for v in (exact_version(r.specifier) for r in reqs) if v}
        for candidate in self._iter_candidates(name, set(), reqs):
            if candidate.version.is_prerelease and not allow_pre:
                continue
            if (
                candidate.yanked
                and str(candidate.version) not in pinned
                and not self._preferred(candidate)
            ):
                continue
            if all(self._satisfies(r, candidate) for r in reqs):
                yield candidate.with_extras(extras) if extras else candidate

    def candidates_of(self, name: str, reqs: Sequence[Req] = ()) -> list[Candidate]:
        """Every candidate of a name that `reqs` accept (explanations only: this evaluates every
        version, and builds nothing)."""
        return [
            c
            for c in self._iter_candidates(name, set(), list(reqs))
            if all(self._satisfies(r, c) for r in reqs)
        ]

    def _preferred(self, candidate: Candidate) -> bool:
        preferences = self.context.preferences
        return preferences is not None and preferences.version(candidate.name) == candidate.version

    def _special_candidates(self, name: str) -> list[Candidate] | None:
        if name == PYTHON:
            python = self.context.target.python
            return [
                Candidate(PYTHON, Version(f"{python.major}.{python.minor}"), provided_by="target")
            ]
        if name in self.context.conda_provided:
            return [Candidate(name, self.context.conda_provided[name], provided_by="conda")]
        return None

    def _project_versions(self, name: str) -> list[ProjectVersions]:
        if name not in self._projects:
            self._projects[name] = [
                ProjectVersions(p, self.files) for p in self.source.projects(name)
            ]
        return self._projects[name]

    def _satisfies(self, req: Req, candidate: Candidate) -> bool:
        if req.name != candidate.name:
            return False
        if (
            req.local is not None
            and not candidate.provided_by
            and label_of(candidate.version) != req.local
        ):
            return False
        if req.url:
            return any(f.url.split("#")[0] == req.url.split("#")[0] for f in candidate.files)
        return req.specifier.contains(
            candidate.version, prereleases=True if candidate.provided_by else None
        )

    # -- dependencies ----------------------------------------------------------------------------

    def rules_for(self, name: str) -> list[Req]:
        if name not in self._rules:
            self._rules[name] = self.context.name_rules(name)
        return self._rules[name]

    def _compute_dependencies(self, candidate: Candidate) -> list[Req]:
        parent = f"{candidate.name}=={candidate.version}"
        deps: list[Req] = []
        if candidate.extras:
            # name[extra] depends on name at the same version, plus the extra's requirements
            deps.append(Req(candidate.name, SpecifierSet(f"=={candidate.version}"), parent=parent))
        best = candidate.best_file
        # only the python, conda-provided and absent stand-ins (never asked) have no file
        if best is None:
            raise ValueError(
                f"{candidate.name} {candidate.version} has no file to read metadata from"
            )
        metadata = self.source.metadata(candidate.name, str(candidate.version), best)
        if metadata.requires_python:
            # a malformed Requires-Python: pip ignores it too
            with contextlib.suppress(InvalidSpecifier):
                deps.append(Req(PYTHON, SpecifierSet(metadata.requires_python), parent=parent))
        for text in metadata.requires_dist:
            try:
                requirement = parse_requirement(text)
            except InvalidRequirement:
                continue  # a broken line in someone's METADATA: pip skips it too
            if not self._marker_holds(requirement.marker, candidate.extras):
                continue
            req = Req(
                canonicalize_name(requirement.name),
                requirement.specifier,
                frozenset(canonicalize_name(e) for e in requirement.extras),
                requirement.url,
                parent,
            )
            if candidate.extras and not _mentions_extra(requirement.marker):
                continue  # the base candidate brings those
            deps.append(req)
        named = {d.name for d in deps if d.name != PYTHON}
        rules = [rule for name in sorted(named) for rule in self.rules_for(name)]
        if not candidate.extras:
            rules += self._hazard_constraints(candidate, parent) + self._pairing_constraints(
                candidate, parent
            )
        # constraints first: resolvelib looks at a name's candidates as each requirement arrives,
        # and a candidate the constraint excludes must never be looked at (an sdist gets built);
        # then what decides without the network (resolve/dependency_order.py)
        return fastest_first(rules + deps)

    def _marker_holds(self, marker: Marker | None, extras: frozenset[str]) -> bool:
        if marker is None:
            return True
        if not extras:
            return marker.evaluate({**self.environment, "extra": ""})
        return any(marker.evaluate({**self.environment, "extra": extra}) for extra in extras)

    def _hazard_constraints(self, candidate: Candidate, parent: str) -> list[Req]:
        out: list[Req] = []
        for hazard in self.context.hazards:
            if hazard.applies(candidate.name, str(candidate.version), self.context.target.platform):
                constrain = hazard.constrain
                out.append(
                    Req(
                        canonicalize_name(constrain.name),
                        constrain.specifier,
                        parent=parent,
                        constraint_only=True,
                        why=f"knowledge: {hazard.id}, {hazard.origin}",
                    )
                )
        return out

    def _pairing_constraints(self, candidate: Candidate, parent: str) -> list[Req]:
        """torch's build and torchvision's/torchaudio's must come from the same place."""
        if self.context.torch_builds is None:
            return []
        label = label_of(candidate.version)
        where = f"+{label} builds" if label else "PyPI's own builds"
        if candidate.name == "torch":
            return [
                Req(
                    n,
                    SpecifierSet(),
                    parent=parent,
                    constraint_only=True,
                    local=label,
                    why=f"{n} must be the build that goes with torch {candidate.version} ({where})",
                )
                for n in sorted(PAIRED)
            ]
        if candidate.name in PAIRED:
            return [
                Req(
                    "torch",
                    SpecifierSet(),
                    parent=parent,
                    constraint_only=True,
                    local=label,
                    why=f"{candidate.name} {candidate.version} goes with torch's {where}",
                )
            ]
        return []


def _mentions_extra(marker: Marker | None) -> bool:
    return marker is not None and "extra" in str(marker)
