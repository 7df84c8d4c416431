"""The pip side of a resolution for one platform: each pinned distribution with its files (and
hashes), why it is there (`via`) and the knowledge rules that bounded it."""

from __future__ import annotations

from dataclasses import dataclass

from lockguard.model.dist import DistFile


@dataclass(frozen=True, slots=True)
class Pin:
    name: str
    version: str
    index_url: str
    files: tuple[DistFile, ...]
    via: tuple[str, ...]  # parent names, or INTENT for top-level requirements
    dependencies: tuple[tuple[str, str], ...] = ()  # (name, specifier) this pin requires
    constraints: tuple[str, ...] = ()  # knowledge rules that bounded this pin

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(sorted({f.sha256 for f in self.files if f.sha256}))


@dataclass(frozen=True, slots=True)
class PipResolution:
    platform: str
    pins: tuple[Pin, ...]
    conda_provided: tuple[tuple[str, str], ...] = ()

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)

    @property
    def indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.index_url for p in self.pins))
