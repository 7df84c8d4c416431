"""What every row of the knowledge keeps: `source` (the citation) and `origin` (file:line in
constraints/), so an explanation can say which fact it rests on and where it is written down."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    source: str
    origin: str
