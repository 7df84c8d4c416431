"""One fact that takes part in an unsatisfiable intent: the value an Unsatisfiable error carries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Conflict:
    """One fact that takes part in an unsatisfiable intent, with where it comes from."""

    fact: str
    source: str | None = None
