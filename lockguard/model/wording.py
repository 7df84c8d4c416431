"""How counts and sizes read in messages: "1 package", "21,905 files" (never "1 packages"),
"5.52 GB"."""

from __future__ import annotations


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """counted(1, "file") -> "1 file", counted(21905, "file") -> "21,905 files"; `plural` for words
    that do not take an s (counted(2, "library", "libraries"))."""
    word = singular if number == 1 else (plural or singular + "s")
    return f"{number:,} {word}"


def a_or_an(noun: str) -> str:
    """'an environment', 'a requirements' (by the first letter: the nouns here are file kinds)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def human_size(size: int) -> str:
    """1536 -> "1.54 KB", 5_520_000_000 -> "5.52 GB" (decimal units, as pip and `df -H` print)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= scale:
            value = size / scale
            return (
                f"{value:.2f} {unit}"
                if value < 10
                else f"{value:.1f} {unit}"
                if value < 100
                else f"{value:.0f} {unit}"
            )
    return "1 byte" if size == 1 else f"{size} bytes"
