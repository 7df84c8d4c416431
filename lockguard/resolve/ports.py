"""What resolution needs from the outside world, as small Protocols (io/ implements them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from lockguard.model.dist import DistFile, DistMetadata


@dataclass(frozen=True)
class Project:
    name: str
    index_url: str
    files: tuple[DistFile, ...]


class PackageSource(Protocol):
    def projects(self, name: str) -> list[Project]:
        """The project's pages. First-index strategy: one page, except for names the source
        routes to several indexes (torch on PyPI and the PyTorch index)."""

    def metadata(self, name: str, version: str, file: DistFile) -> DistMetadata: ...

    def prefetch_metadata(self, name: str, version: str, file: DistFile) -> None:
        """A hint: this file's metadata will likely be asked for soon."""

    def prefetch_projects(self, names: list[str]) -> None:
        """A hint: these projects will likely be asked for soon."""
