"""Distribution files and their metadata, as the resolver sees them (no I/O here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DistFile:
    """One file of a project on an index (a wheel or an sdist)."""

    filename: str
    url: str
    hashes: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    requires_python: str | None = None
    yanked: bool | str = False  # a string: yanked, with the index's reason (PEP 592)
    # PEP 658/714 core-metadata
    metadata: bool | Mapping[str, str] = field(default=False, hash=False, compare=False)
    upload_time: str | None = None
    size: int | None = None

    @property
    def sha256(self) -> str | None:
        return self.hashes.get("sha256")

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


@dataclass(frozen=True, slots=True)
class DistMetadata:
    """The parts of core metadata that resolution needs."""

    name: str
    version: str
    requires_dist: tuple[str, ...]
    requires_python: str | None
    how: str = ""  # how it was obtained: override, cache, pep658, range, download, pkg-info, pep517
