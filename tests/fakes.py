"""In-memory ports for the scenario tier (tests/test_scenarios.py): a `PackageSource` and a
`CondaPort` built from a small declarative snapshot of an index and a channel, so that the pure
resolver (resolve/orchestrate.py) runs with no HTTP server, no cache and no rattler.

They answer what the real ports answer (io/index/pip_source.py, io/index/conda.py) for the
snapshot they hold, and record what the resolver asked, so a scenario can say which files'
metadata was never read. What the snapshot cannot express (page formats, range requests, sdist
builds, the cache) is proven by the HTTP tier against a real index on 127.0.0.1.

The snapshot's format (releases with their files, Requires-Dist, Requires-Python, upload times and
yanks; conda records) is described in tests/data/scenarios/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from lockguard.errors import BuildFailed, SourceUnreachable
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.dist import DistFile, DistMetadata
from lockguard.model.lock import CondaRecord
from lockguard.model.locked import LockedConda
from lockguard.resolve.ports import CondaPort, PackageSource, Project

# -- the pip side ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Release:
    """One version of a project on an index, with the files it publishes."""

    name: str
    version: str
    requires: tuple[str, ...] = ()
    requires_python: str | None = None
    wheels: tuple[str, ...] = ("py3-none-any",)
    sdist: bool = False
    sdist_build_fails: bool = False
    uploaded: str | None = None
    yanked: bool | str = False

    def files(self, page_url: str) -> tuple[DistFile, ...]:
        stem = f"{self.name.replace('-', '_')}-{self.version}"
        names = [f"{stem}-{tag}.whl" for tag in self.wheels]
        if self.sdist:
            names.append(f"{stem}.tar.gz")
        return tuple(
            DistFile(
                filename,
                f"{page_url}{filename}",
                hashes={"sha256": "0" * 64},
                requires_python=self.requires_python,
                yanked=self.yanked,
                upload_time=self.uploaded,
            )
            for filename in names
        )

    def metadata(self) -> DistMetadata:
        return DistMetadata(
            canonicalize_name(self.name),
            self.version,
            self.requires,
            self.requires_python,
            how="snapshot",
        )


class FakeIndex:
    """A `PackageSource` over releases held in memory: the intent's first index (`releases`) and
    the PyTorch index's variant pages (`variants`, by label: cu118, cpu); `unreachable`: every
    variant page raises SourceUnreachable, like a PyTorch index that is down."""

    def __init__(
        self,
        index_url: str,
        releases: Iterable[Release],
        *,
        pytorch_index: str,
        variants: Mapping[str, Iterable[Release]] | None = None,
        unreachable: bool = False,
    ) -> None:
        self.index_url = index_url.rstrip("/")
        self.pytorch_index = pytorch_index.rstrip("/")
        self.unreachable = unreachable
        self._releases: dict[str, Release] = {}  # file url -> its release
        self._pages = self._grouped(self.index_url, releases)
        self._variants = {
            label: self._grouped(f"{self.pytorch_index}/{label}", found)
            for label, found in (variants or {}).items()
        }
        self.read: list[str] = []  # files whose metadata the resolver asked for (or hinted at)
        self.variant_pages: list[str] = []  # "cu118/torch": variant pages the resolver asked for

    def _grouped(self, index_url: str, releases: Iterable[Release]) -> dict[str, Project]:
        files: dict[str, list[DistFile]] = {}
        for release in releases:
            name = canonicalize_name(release.name)
            for file in release.files(f"{index_url}/{name}/"):
                self._releases[file.url] = release
                files.setdefault(name, []).append(file)
        return {name: Project(name, index_url, tuple(found)) for name, found in files.items()}

    # -- PackageSource ---------------------------------------------------------------------------

    def projects(self, name: str) -> list[Project]:
        page = self._pages.get(canonicalize_name(name))
        return [page] if page else []

    def index_project(self, name: str, index_url: str) -> Project | None:
        key = canonicalize_name(name)
        label = index_url.rstrip("/").rsplit("/", 1)[-1]
        self.variant_pages.append(f"{label}/{key}")
        if self.unreachable:
            raise SourceUnreachable(
                f"cannot reach {index_url}/{key}/ (connection refused)", url=index_url
            )
        return self._variants.get(label, {}).get(key)

    def metadata(self, name: str, version: str, file: DistFile) -> DistMetadata:
        self.read.append(file.filename)
        release = self._releases[file.url]
        if release.sdist_build_fails and not file.is_wheel:
            raise BuildFailed(
                f"cannot read the metadata of {file.filename}: its build failed "
                "(the snapshot says so)",
                filename=file.filename,
                lasting=True,
            )
        return release.metadata()

    def prefetch_metadata(self, name: str, version: str, file: DistFile) -> None:
        self.read.append(file.filename)

    def prefetch_projects(self, names: list[str]) -> None:
        """Nothing to fetch ahead: every page is in memory."""


def releases_from(table: Mapping[str, Any]) -> list[Release]:
    """`{NAME: {VERSION: {requires, wheels, ...}}}`, as a scenario file writes it."""
    found = []
    for name, versions in table.items():
        for version, fields in versions.items():
            wheels = tuple(fields.get("wheels", ("py3-none-any",)))
            found.append(
                Release(
                    name=name,
                    version=version,
                    requires=tuple(fields.get("requires", ())),
                    requires_python=fields.get("requires-python"),
                    wheels=wheels,
                    sdist=bool(fields.get("sdist", not wheels)),
                    sdist_build_fails=bool(fields.get("sdist-build-fails", False)),
                    uploaded=fields.get("uploaded"),
                    yanked=fields.get("yanked", False),
                )
            )
    return found


# -- the conda side -------------------------------------------------------------------------------

_SPEC = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class _Spec:
    """A conda MatchSpec of the forms lockguard writes: `name`, `name=1.2`, `name=1.2=build`,
    `name==1.2`, `name >=1.2,<2`, `name 1.2.*`."""

    name: str
    version: str = ""
    build: str = ""

    @classmethod
    def parse(cls, text: str) -> _Spec:
        match = _SPEC.match(text)
        if match is None:
            raise ValueError(f"not a MatchSpec: {text!r}")
        name, rest = match.group(1), match.group(2)
        if rest.startswith("=") and not rest.startswith("=="):
            version, _, build = rest[1:].partition("=")
            return cls(name, f"{version}.*" if not version.endswith("*") else version, build)
        version, _, build = rest.partition(" ")
        return cls(name, version, build)

    def matches(self, record: CondaRecord) -> bool:
        if record.name != self.name or not fnmatchcase(record.build, self.build or "*"):
            return False
        return all(_version_holds(record.version, part) for part in self.version.split(",") if part)


def _version_holds(version: str, spec: str) -> bool:
    operator = re.match(r"^(==|!=|>=|<=|>|<)?(.*)$", spec.strip())
    assert operator is not None
    op, wanted = operator.group(1) or "", operator.group(2)
    if wanted.endswith(".*") or (not op and "*" in wanted):
        prefix = wanted.rstrip("*").rstrip(".")
        return version == prefix or version.startswith(prefix + ".")
    if not op:
        return version == wanted or version.startswith(wanted + ".")
    try:
        have, bound = Version(version), Version(wanted)
    except InvalidVersion:
        return False
    return {
        "==": have == bound,
        "!=": have != bound,
        ">=": have >= bound,
        "<=": have <= bound,
        ">": have > bound,
        "<": have < bound,
    }[op]


@dataclass
class FakeConda:
    """A `CondaPort` over one channel held in memory: each spec (and each dependency of what was
    taken) gets the locked record where it still fits, else the newest that does. No backtracking:
    a scenario's channel is small enough to be solved greedily, and a spec nothing fits is
    Unsatisfiable, as rattler's SolverError is."""

    channel: str
    records: Sequence[CondaRecord]
    asked: list[list[str]] = field(default_factory=list)

    def solve(
        self,
        specs: list[str],
        channels: tuple[str, ...],
        platform: str,
        virtual_packages: list[tuple[str, str]],
        exclude_newer: datetime | None,
        locked: Sequence[LockedConda] = (),
    ) -> list[CondaRecord]:
        self.asked.append(list(specs))
        preferred = {(r.name, r.version, r.build) for r in locked}
        chosen: dict[str, CondaRecord] = {}
        todo = [_Spec.parse(s) for s in specs]
        while todo:
            spec = todo.pop(0)
            if spec.name.startswith("__"):
                continue  # a virtual package: the target's, never the channel's
            if spec.name in chosen:
                if not spec.matches(chosen[spec.name]):
                    raise self._unsolvable(platform, spec, specs)
                continue
            fitting = [r for r in self.records if spec.matches(r)]
            if not fitting:
                raise self._unsolvable(platform, spec, specs)
            fitting.sort(
                key=lambda r: ((r.name, r.version, r.build) in preferred, _order(r.version)),
                reverse=True,
            )
            chosen[spec.name] = fitting[0]
            todo += [_Spec.parse(d) for d in fitting[0].depends]
        return list(chosen.values())

    def _unsolvable(self, platform: str, spec: _Spec, specs: list[str]) -> Unsatisfiable:
        wanted = " ".join(filter(None, [spec.name, spec.version, spec.build]))
        return Unsatisfiable(
            f"the conda side has no solution for {platform}: nothing in {self.channel} "
            f"provides {wanted}",
            hint="the specs were: " + " ".join(specs),
        )


def _order(version: str) -> tuple[int, Version | str]:
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def conda_from(channel: str, table: Mapping[str, Any]) -> FakeConda:
    """`{NAME: {VERSION: {build, depends, noarch}}}`, as a scenario file writes it."""
    records = []
    for name, versions in table.items():
        for version, fields in versions.items():
            build = fields.get("build", "h0")
            records.append(
                CondaRecord(
                    name=name,
                    version=version,
                    build=build,
                    channel=channel,
                    subdir="noarch" if fields.get("noarch") else "linux-64",
                    url=f"{channel}/linux-64/{name}-{version}-{build}.conda",
                    md5="0" * 32,
                    sha256="0" * 64,
                    depends=tuple(fields.get("depends", ())),
                    noarch=fields.get("noarch"),
                )
            )
    return FakeConda(channel, records)


# mypy proves the fakes implement the ports exactly (tests/ is not in [tool.mypy] files: run
# `mypy --strict tests/fakes.py`)
def _as_source(index: FakeIndex) -> PackageSource:
    return index


def _as_conda_port(conda: FakeConda) -> CondaPort:
    return conda
