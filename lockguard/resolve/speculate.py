"""Guesses for prefetching: which file of a project the resolver will most likely want, and
what a distribution will ask for next. Pure; the package source runs the guesses in threads so
that the whole dependency graph is fetched in parallel instead of one resolver step at a time.
A wrong guess costs one fetch, never a wrong answer: the resolver still decides everything."""

from __future__ import annotations

from collections.abc import Mapping

from packaging.requirements import InvalidRequirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from lockguard.model.dist import DistFile, DistMetadata
from lockguard.model.target import Target
from lockguard.resolve.candidates import CandidateFilter, ProjectVersions
from lockguard.resolve.ports import Project
from lockguard.resolve.requirements import parse_requirement


class Speculator:
    def __init__(
        self,
        target: Target,
        files: CandidateFilter,
        torch_versions: list[str] | None = None,
        preferred: Mapping[str, Version] | None = None,
    ) -> None:
        self.environment = {**target.marker_environment(), "extra": ""}
        self.files = files
        self.torch_versions = [Version(v) for v in torch_versions] if torch_versions else None
        # the existing lock's versions: the resolver tries them first
        self.preferred = preferred or {}

    def best_file(self, project: Project, specifier: SpecifierSet) -> tuple[str, DistFile] | None:
        """(version, file) of the newest final release that fits the target and the specifier."""
        versions = ProjectVersions(project, self.files)
        order = versions.versions
        if project.name == "torch" and self.torch_versions is not None:
            present = set(order)
            order = [v for v in self.torch_versions if v in present]
        preferred = self.preferred.get(project.name)
        if preferred is not None and preferred in order:
            order = [preferred, *order]
        for version in order:
            if version.is_prerelease or not specifier.contains(version, prereleases=True):
                continue
            candidate = versions.candidate(version)
            if candidate is not None and candidate.best_file is not None:
                return str(version), candidate.best_file
        return None

    def dependencies(self, metadata: DistMetadata) -> list[tuple[str, SpecifierSet]]:
        out: list[tuple[str, SpecifierSet]] = []
        for text in metadata.requires_dist:
            try:
                req = parse_requirement(text)
            except InvalidRequirement:
                continue
            if req.marker is not None and not req.marker.evaluate(self.environment):
                continue
            out.append((canonicalize_name(req.name), req.specifier))
        return out
