"""The one adapter over tomlkit for lock files: plain data in, byte-stable TOML text out.

tomlkit (already a dependency for editing pyproject.toml) is used rather than tomli-w for its
layout control: a pylock.toml reads best with one `[[packages]]` table per package and its files
as one-line inline tables, as uv and pip write it. Layout rules, so that the same data always gives
the same bytes:
- top-level scalars and lists of scalars first, in the order given;
- a top-level list of tables becomes an array of tables (`[[packages]]`);
- inside those tables, a list of tables becomes a multi-line array of inline tables and a table an
  inline table (`wheels = [{...}, ...]`, `sdist = {...}`);
- a top-level table of tables becomes dotted tables (`[tool.lockguard]`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tomlkit
from tomlkit.items import Item, Table


def dumps(document: dict[str, Any], comments: Sequence[str] = ()) -> str:
    doc = tomlkit.document()
    for text in comments:
        doc.add(tomlkit.comment(text))
    tables = []
    for key, value in document.items():
        if _is_table_list(value) or isinstance(value, dict):
            tables.append((key, value))
        else:
            doc.add(key, _value(value))
    for key, value in tables:
        if isinstance(value, dict):
            outer = tomlkit.table(is_super_table=True)
            for name, inner in value.items():
                outer.add(name, _table(inner))
            doc.add(key, outer)
        else:
            aot = tomlkit.aot()
            for item in value:
                aot.append(_table(item))
            doc.add(key, aot)
    return tomlkit.dumps(doc)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _table(values: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, _value(value))
    return table


def _value(value: object) -> Item:
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        for key, inner in value.items():
            inline.append(key, _value(inner))
        return inline
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_value(v) for v in value)
        if _is_table_list(value):
            array.multiline(True)
        return array
    return tomlkit.item(value)
