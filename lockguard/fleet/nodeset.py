"""Node names folded into node sets as ClusterShell prints them: gpu01,gpu02,gpu03,gpu07 ->
gpu[01-03,07].

ClusterShell's NodeSet is used when it is installed (lockguard[clush]); otherwise a small folding
of the last number in each name gives an equivalent set (ClusterShell reads it back to the same
names; multi-dimensional names fold on their last number only: r1n[1-2],r2n[1-2] where ClusterShell
writes r[1-2]n[1-2]).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")
_DIGITS = re.compile(r"\d+")


def fold(names: Iterable[str]) -> str:
    names = sorted(set(names))
    if not names:
        return ""
    if all(len(_DIGITS.findall(name)) <= 1 for name in names):
        # one number per name: the plain folding prints what ClusterShell prints (tested against
        # it), ten times faster on 10,000 names
        return fold_plain(names)
    folded = _clustershell_fold(names)
    return folded if folded is not None else fold_plain(names)


def _clustershell_fold(names: list[str]) -> str | None:
    if any(ch in name for name in names for ch in ",[]!&^ @"):
        return None  # characters that are NodeSet syntax: fold them ourselves, literally
    try:  # an optional engine (the `clush` extra): without it, the plain folding
        from ClusterShell.NodeSet import NodeSet
    except ImportError:
        return None
    try:
        return str(NodeSet.fromlist(names))
    except Exception:  # a name NodeSet refuses: the plain folding still shows it
        return None


def fold_plain(names: Iterable[str]) -> str:
    """The folding without ClusterShell: names grouped by what surrounds their last number, each
    group's numbers folded into ranges per zero-padding width."""
    patterns: dict[tuple[str, str], list[str]] = defaultdict(list)
    plain: list[str] = []
    for name in set(names):
        match = _LAST_NUMBER.match(name)
        if match:
            patterns[(match.group(1), match.group(3))].append(match.group(2))
        else:
            plain.append(name)
    parts = [(name, name) for name in plain]
    for (prefix, suffix), numbers in patterns.items():
        if len(numbers) == 1:
            parts.append((prefix + numbers[0] + suffix, prefix + suffix))
            continue
        parts.append((f"{prefix}[{_ranges(numbers)}]{suffix}", prefix + suffix))
    return ",".join(text for text, _key in sorted(parts, key=lambda part: (part[1], part[0])))


def _ranges(numbers: list[str]) -> str:
    """'1','2','3','7' -> '1-3,7'. A zero-padded number ('01') folds with those of its width; a
    number without a leading zero joins the widest padding it fills ('10' with '09': 09-10), as
    ClusterShell's RangeSet does; ranges are listed by padding, then first value."""
    widths = sorted({len(n) for n in numbers if len(n) > 1 and n.startswith("0")})
    by_width: dict[int, set[int]] = defaultdict(set)
    for n in numbers:
        if len(n) > 1 and n.startswith("0"):
            width = len(n)
        else:
            width = max((w for w in widths if w <= len(n)), default=0)
        by_width[width].add(int(n))
    ranges: list[tuple[int, int, str]] = []
    for width, found in by_width.items():
        values = sorted(found)
        start = previous = values[0]
        for value in [*values[1:], None]:
            if value is not None and value == previous + 1:
                previous = value
                continue
            first, last = f"{start:0{width}d}", f"{previous:0{width}d}"
            ranges.append((width, start, first if start == previous else f"{first}-{last}"))
            if value is not None:
                start = previous = value
    return ",".join(text for _width, _start, text in sorted(ranges))


def natural_key(name: str) -> tuple[Any, ...]:
    """gpu2 before gpu10: names compared by their text and number runs."""
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in _DIGIT_SPLIT.split(name)
        if part
    )


_DIGIT_SPLIT = re.compile(r"(\d+)")
