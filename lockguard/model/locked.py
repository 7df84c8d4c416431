"""What the existing lock holds, as the resolve's preferences read it (io/project/prior_lock.py
fills these in; resolve/preferences.py turns them into what the resolver tries first)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class LockedConda:
    """One conda record of the existing conda-lock.yml."""

    name: str
    version: str
    build: str


@dataclass(frozen=True, slots=True)
class LockedPlatform:
    """What the existing lock holds for one platform: pip versions (requirements.lock), who
    requires them (its `# via` notes), and the conda records (conda-lock.yml)."""

    platform: str
    pip: Mapping[str, str] = field(default_factory=dict)  # canonical name -> version
    via: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    conda: tuple[LockedConda, ...] = ()
