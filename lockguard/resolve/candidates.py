"""Candidates: one (name, version) with the files of that version that fit the target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from lockguard.errors import SourceUnreachable
from lockguard.model.cooldown import Cutoff
from lockguard.model.dist import DistFile
from lockguard.model.target import Target
from lockguard.resolve.ports import Project
from lockguard.resolve.tags import wheel_rank

if TYPE_CHECKING:
    from lockguard.model.intent import Intent


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str  # canonical
    version: Version
    index_url: str = ""
    files: tuple[DistFile, ...] = ()  # fitting files, best wheel first, sdists last
    extras: frozenset[str] = frozenset()
    yanked: bool = False
    provided_by: str | None = None  # "conda": installed by the conda side, not by pip
    absent: bool = False  # the "not installed" stand-in that only constraints accept

    @property
    def key(self) -> str:
        if self.extras:
            return f"{self.name}[{','.join(sorted(self.extras))}]"
        return self.name

    @property
    def best_file(self) -> DistFile | None:
        return self.files[0] if self.files else None

    def with_extras(self, extras: frozenset[str]) -> Candidate:
        return Candidate(
            self.name,
            self.version,
            self.index_url,
            self.files,
            extras,
            self.yanked,
            self.provided_by,
            self.absent,
        )


@lru_cache(maxsize=4096)
def _specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None  # an index's malformed data-requires-python: let metadata decide


def _file_version(filename: str) -> str | None:
    """The version part of a wheel or sdist filename, cheaply (no full parse)."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return parts[1] if len(parts) >= 5 else None
    for suffix in (".tar.gz", ".zip"):
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            return stem.rsplit("-", 1)[1] if "-" in stem else None
    return None


class ProjectVersions:
    """A project's files grouped by version; files are checked against the target only for the
    versions the resolver actually looks at (a project like numpy has tens of thousands)."""

    def __init__(self, project: Project, files: CandidateFilter) -> None:
        self.project = project
        self.filter = files
        groups: dict[Version, list[DistFile]] = {}
        texts: dict[str, Version | None] = {}
        for file in project.files:
            text = _file_version(file.filename)
            if text is None:
                continue
            if text not in texts:
                try:
                    texts[text] = Version(text)
                except InvalidVersion:
                    texts[text] = None
            version = texts[text]
            if version is not None:
                groups.setdefault(version, []).append(file)
        self._groups = groups
        self.versions = sorted(groups, reverse=True)
        self._candidates: dict[Version, Candidate | None] = {}

    def files_of(self, version: Version) -> list[DistFile]:
        """Every file of `version` the index lists (fitting the target or not)."""
        return list(self._groups.get(version, []))

    def candidate(self, version: Version) -> Candidate | None:
        """The candidate for `version`, or None when no file of it fits the target."""
        if version not in self._candidates:
            self._candidates[version] = self.filter.candidate(
                self.project, version, self._groups.get(version, [])
            )
        return self._candidates[version]


@dataclass
class CandidateFilter:
    """Which files of a project can be used for the target."""

    target: Target
    exclude_newer: datetime | None = None
    missing_upload_times: set[str] = field(default_factory=set)
    # exclude-newer-package: canonical name -> its own cut-off (Cutoff(None): none at all)
    per_package: Mapping[str, Cutoff] = field(default_factory=dict)
    span: str | None = None  # exclude-newer given as a cooldown span (for messages)

    @classmethod
    def of(cls, target: Target, intent: Intent) -> CandidateFilter:
        """The filter of an intent's cut-offs: exclude-newer, and exclude-newer-package's."""
        return cls(
            target,
            intent.exclude_newer,
            per_package=intent.package_cutoffs,
            span=intent.exclude_newer_span,
        )

    def untimed(self) -> CandidateFilter:
        """The same target without any cut-off (what the index has, for messages)."""
        return CandidateFilter(self.target)

    @property
    def timed(self) -> bool:
        """Any cut-off at all (the global one or a package's)."""
        return self.exclude_newer is not None or any(
            c.at is not None for c in self.per_package.values()
        )

    def cutoff(self, name: str) -> Cutoff:
        """The cut-off that applies to `name` (canonical)."""
        own = self.per_package.get(name)
        return own if own is not None else Cutoff(self.exclude_newer, self.span)

    def cutoff_label(self, name: str) -> str:
        """ "exclude-newer 2024-03-01", or the package's own, for messages."""
        own = self.per_package.get(name)
        if own is not None:
            return f"exclude-newer-package {name} {own.text()}"
        return f"exclude-newer {Cutoff(self.exclude_newer, self.span).text()}"

    def candidate(
        self, project: Project, version: Version, files: list[DistFile]
    ) -> Candidate | None:
        ranked = []
        for file in files:
            rank = self._rank(project.name, file)
            if rank is not None:
                ranked.append((rank, file.filename, file))
        if not ranked:
            return None
        ranked.sort(key=lambda item: (item[0], item[1]))
        fitting = tuple(f for _r, _n, f in ranked)
        return Candidate(
            project.name, version, project.index_url, fitting, yanked=all(f.yanked for f in fitting)
        )

    def candidates(self, project: Project) -> list[Candidate]:
        """Every version with at least one fitting file, newest first."""
        versions = ProjectVersions(project, self)
        return [c for c in (versions.candidate(v) for v in versions.versions) if c is not None]

    def _rank(self, name: str, file: DistFile) -> int | None:
        if not self._python_ok(file) or not self._time_ok(file, name):
            return None
        try:
            if file.is_wheel:
                wheel_name, _version, _build, _tags = parse_wheel_filename(file.filename)
                rank = wheel_rank(self.target, file.filename)
                if rank is None or canonicalize_name(wheel_name) != name:
                    return None
                return rank
            sdist_name, _version = parse_sdist_filename(file.filename)
            return 1_000_000 if canonicalize_name(sdist_name) == name else None  # after every wheel
        except (InvalidWheelFilename, InvalidSdistFilename):
            return None

    def fits_python(self, file: DistFile) -> bool:
        return self._python_ok(file)

    def fits_time(self, file: DistFile, name: str | None = None) -> bool:
        """Uploaded no later than exclude-newer (the cut-off of `name` when given; a file
        without an upload time counts as fitting)."""
        return self._time_ok(file, name)

    def _python_ok(self, file: DistFile) -> bool:
        if not file.requires_python:
            return True
        spec = _specifier(file.requires_python)
        return spec is None or spec.contains(Version(str(self.target.python)), prereleases=True)

    def _time_ok(self, file: DistFile, name: str | None = None) -> bool:
        own = self.per_package.get(name) if name is not None and self.per_package else None
        cutoff = own.at if own is not None else self.exclude_newer
        if cutoff is None:
            return True
        if not file.upload_time:
            self.missing_upload_times.add(file.url.split("/")[2] if "://" in file.url else file.url)
            return True
        try:
            uploaded = datetime.fromisoformat(file.upload_time.replace("Z", "+00:00"))
        except ValueError:  # read only with a cut-off: a page without one never pays for the parse
            page = file.url.rsplit("/", 1)[0] + "/" if "://" in file.url else file.url
            raise SourceUnreachable(
                f"the index page for {file.filename} ({page}) is not a valid PEP 691 page: "
                "its 'upload-time' "
                f"{file.upload_time[:40]!r} is not an ISO 8601 date-time (PEP 700)",
                url=file.url,
                hint="the index serves a broken page; "
                "without exclude-newer the upload times are not read",
            ) from None
        # PEP 700 times are UTC; a page that leaves out the zone means it
        if uploaded.tzinfo is None:
            uploaded = uploaded.replace(tzinfo=timezone.utc)
        return uploaded <= cutoff
