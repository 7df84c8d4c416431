"""Find the line of a key (or of one array element) in TOML source text.

tomllib gives values without positions and tomlkit keeps trivia but no line numbers, so error
messages that must name a line ask this small scanner. It understands what intent files use:
`[table]` and `[[array-of-tables]]` headers, bare or quoted keys, dotted keys, multi-line arrays.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TypeAlias

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)"""
    r"""(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*="""
)
# (table path, array-of-tables index, key path, line number) of one key or header line
_Entry: TypeAlias = tuple[tuple[str, ...], int | None, tuple[str, ...], int]


def _split_dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""", text)
    return tuple(a or b or c for a, b, c in parts)


class TomlLines:
    """Line lookups over one TOML document whose data of interest sits under `base`."""

    def __init__(self, text: str, base: tuple[str, ...] = ()) -> None:
        self.lines = text.splitlines()
        self.base = base
        self._scanned: list[_Entry] | None = None

    def _entries(self) -> list[_Entry]:
        if self._scanned is None:
            self._scanned = list(self._scan())
        return self._scanned

    def _scan(self) -> Iterator[_Entry]:
        """Yield (table_path, array_index, key_path, line_number) for every key line."""
        table: tuple[str, ...] = ()
        counts: dict[tuple[str, ...], int] = {}
        index: int | None = None
        in_multiline = 0
        for number, line in enumerate(self.lines, start=1):
            if in_multiline:
                in_multiline += line.count("[") - line.count("]")
                continue
            header = _HEADER.match(line)
            if header and "=" not in line.split("]")[0]:
                table = _split_dotted(header.group(2))
                if header.group(1) == "[[":
                    counts[table] = counts.get(table, -1) + 1
                    index = counts[table]
                else:
                    index = None
                yield table, index, (), number
                continue
            key = _KEY.match(line)
            if key:
                yield table, index, _split_dotted(key.group(1)), number
                rest = line[key.end() :]
                in_multiline = max(0, rest.count("[") - rest.count("]"))

    def line_of(
        self, *path: str, array_index: int | None = None, element: str | None = None
    ) -> int | None:
        """The line of key `path` under the base table, else of its nearest enclosing header.

        `array_index` selects the n-th `[[table]]`; `element` finds the line of a string element
        inside the key's (possibly multi-line) array value.
        """
        want = self.base + tuple(path)
        found: int | None = None
        fallback: int | None = None
        for table, index, key, number in self._entries():
            if array_index is not None and index is not None and index != array_index:
                continue
            if table + key == want:
                found = number
                break
            if not key and table and want[: len(table)] == table:
                fallback = number
        if found is None:  # `key = [{...}]` or `key = {...}`: the line of the longest enclosing key
            for size in range(len(want) - 1, len(self.base), -1):
                found = next(
                    (n for t, _i, k, n in self._entries() if k and t + k == want[:size]), None
                )
                if found is not None:
                    break
        if found is not None and element is not None:
            return self._element_line(found, element) or found
        return found if found is not None else fallback

    def _element_line(self, start: int, element: str) -> int | None:
        depth = 0
        for number in range(start, len(self.lines) + 1):
            line = self.lines[number - 1]
            if element in line and (f'"{element}"' in line or f"'{element}'" in line):
                return number
            depth += line.count("[") - line.count("]")
            if number > start and depth <= 0:
                break
        return None
