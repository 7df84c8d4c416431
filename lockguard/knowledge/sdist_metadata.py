"""The dependencies of sdists whose metadata build needs torch, known without building them.

causal-conv1d, flash-attn and older mamba-ssm publish only sdists, and computing their metadata
runs a setup.py that imports torch: a PEP 517 build installs torch into an isolated environment
(30 s) or fails (flash-attn: its setup.py imports torch before setup()). Their install_requires is
a fixed list in setup.py, the same for every release of a range: `constraints/sdist_metadata.toml`
states it per range of versions, read from the sdists themselves (setup.py, the egg-info's
requires.txt and PKG-INFO), and `lockguard constraints verify` reads it again from the index.

The specifier is parsed on first use: the pre-commit path loads the knowledge without packaging.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from packaging.specifiers import SpecifierSet

from lockguard.knowledge.row import Row
from lockguard.model.names import canonical_name


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class SdistMetadataRow(Row):
    name: str  # canonical
    versions_text: str  # the PEP 440 specifier of the versions whose sdist the row describes
    requires_dist: tuple[str, ...]
    requires_python: str | None

    @cached_property
    def versions(self) -> SpecifierSet:
        return SpecifierSet(self.versions_text)

    def covers(self, version: str) -> bool:
        """Pre-releases too: a row names the versions it was read from, whatever their kind."""
        return self.versions.contains(version, prereleases=True)


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class SdistMetadata:
    rows: tuple[SdistMetadataRow, ...]

    @cached_property
    def _by_name(self) -> dict[str, tuple[SdistMetadataRow, ...]]:
        found: dict[str, list[SdistMetadataRow]] = {}
        for row in self.rows:
            found.setdefault(row.name, []).append(row)
        return {name: tuple(rows) for name, rows in found.items()}

    def row_for(self, name: str, version: str) -> SdistMetadataRow | None:
        """The row whose specifier covers `version` of project `name`; None: build it as usual."""
        return next(
            (r for r in self._by_name.get(canonical_name(name), ()) if r.covers(version)), None
        )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)
