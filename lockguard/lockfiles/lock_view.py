"""One platform of a lock as the lock files show it: the view each lock format gives (its pip pins,
its conda records), which check's change report and hand-edit tracing compare."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class LockView:
    """One platform of a lock: pip name -> version, conda name -> (version, build)."""

    platform: str
    pip: Mapping[str, str] = field(default_factory=dict)
    conda: Mapping[str, tuple[str, str]] = field(default_factory=dict)
