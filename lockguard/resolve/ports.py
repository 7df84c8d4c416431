"""What resolution needs from the outside world, as small Protocols (io/ implements them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from lockguard.model.dist import DistFile, DistMetadata
from lockguard.model.lock import CondaRecord
from lockguard.model.locked import LockedConda


@dataclass(frozen=True, slots=True)
class Project:
    name: str
    index_url: str
    files: tuple[DistFile, ...]


class PackageSource(Protocol):
    def projects(self, name: str) -> list[Project]:
        """The project's page from the first of the intent's indexes that has it (first-index
        strategy; the PyTorch index is never consulted here)."""

    def index_project(self, name: str, index_url: str) -> Project | None:
        """The project's page on one given index (a PyTorch index variant), fetched only when a
        candidate needs it. Raises SourceUnreachable when that index cannot be reached."""

    def metadata(self, name: str, version: str, file: DistFile) -> DistMetadata: ...

    def prefetch_metadata(self, name: str, version: str, file: DistFile) -> None:
        """A hint: this file's metadata will likely be asked for soon."""

    def prefetch_projects(self, names: list[str]) -> None:
        """A hint: these projects will likely be asked for soon."""


class CondaPort(Protocol):
    def solve(
        self,
        specs: list[str],
        channels: tuple[str, ...],
        platform: str,
        virtual_packages: list[tuple[str, str]],
        exclude_newer: datetime | None,
        locked: Sequence[LockedConda] = (),
    ) -> list[CondaRecord]:
        """`locked`: the existing lock's records, preferred where they still fit (rattler's
        locked_packages)."""
