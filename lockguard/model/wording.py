"""Words for counts in messages: "1 package", "2 packages" (never "1 packages")."""

from __future__ import annotations


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """`3 files`, `1 file`; `plural` for words that do not take an s (`1 entry`, `2 entries`)."""
    word = singular if number == 1 else (plural or singular + "s")
    return f"{number:,} {word}"
