"""Write an intent with tomlkit, keeping an existing pyproject.toml's comments and layout.

`values` holds the keys to write (python, cuda, glibc, channels, conda, pip, indexes,
pytorch-index, outputs); `notes` may give each value a trailing comment: a string for a scalar key,
a list of strings (one per element) for a list key. `lockguard init --from` uses them to say which
file and line every value came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

import tomlkit
from tomlkit.items import AbstractTable, Array, Table

from lockguard.errors import InputError
from lockguard.model.toml_lines import TomlLines

SCALARS = ("python", "cuda", "glibc", "name", "pytorch-index")
LISTS = ("channels", "conda", "pip", "indexes")
# a trailing comment per key: a string for a scalar key, one per element (or one for all) for a
# list key
Notes: TypeAlias = Mapping[str, "str | list[str]"]


def _table(values: Mapping[str, object], notes: Notes | None = None) -> Table:
    notes = notes or {}
    table = tomlkit.table()
    for key in (
        "python",
        "cuda",
        "glibc",
        "name",
        "channels",
        "conda",
        "pip",
        "indexes",
        "pytorch-index",
    ):
        value = values.get(key)
        if key in ("python", "cuda", "pip"):
            value = value if value is not None else ([] if key == "pip" else None)
        elif not value and not (key == "channels" and value == []):
            continue  # an absent optional key keeps its default
        note = notes.get(key)
        if key in SCALARS:
            item = tomlkit.item(value)
            if isinstance(note, str) and note:
                item.comment(note)
        elif isinstance(value, (list, tuple)):
            item = _array([str(v) for v in value], note)
        else:
            raise TypeError(f"{key} must be a list of strings, not {type(value).__name__}")
        table.add(key, item)
    given = values.get("outputs")
    outputs = {k: v for k, v in given.items() if v} if isinstance(given, dict) else {}
    if outputs:
        outputs_table = tomlkit.table()
        for key, value in outputs.items():
            outputs_table.add(key, value)
        table.add("outputs", outputs_table)
    return table


def _array(items: list[str], notes: list[str] | str | None = None) -> Array:
    array = tomlkit.array()
    per_item = notes if isinstance(notes, list) else None
    if per_item and any(per_item):
        for item, note in zip(items, per_item, strict=True):
            array.add_line(item, comment=note or None)
        array.add_line(indent="")
        return array
    array.extend(items)
    if len(items) > 2:
        array.multiline(True)
    if isinstance(notes, str) and notes:
        array.comment(notes)
    return array


def new_intent_document(
    values: Mapping[str, object], notes: Notes | None = None, header: Sequence[str] = ()
) -> str:
    doc = tomlkit.document()
    doc.add(
        tomlkit.comment(
            "lockguard intent: what to lock. `lockguard resolve` turns it into lock files."
        )
    )
    for line in header:
        doc.add(tomlkit.comment(line))
    for key, item in _table(values, notes).items():
        doc.add(key, item)
    text = tomlkit.dumps(doc)
    return text if text.endswith("\n") else text + "\n"


def add_intent_to_pyproject(
    text: str, values: Mapping[str, object], *, force: bool, path: Path, notes: Notes | None = None
) -> str:
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise InputError(
            f"{path} is not valid TOML: {exc}", file=str(path), line=getattr(exc, "line", None)
        ) from None
    tool = doc.get("tool")
    if tool is None:
        tool = tomlkit.table(is_super_table=True)
        doc.add("tool", tool)
    if not isinstance(tool, AbstractTable):  # `tool = 5`: no [tool.lockguard] can go under it
        line = TomlLines(text).line_of("tool")
        raise InputError(
            f"{path}" + (f":{line}" if line else "") + f": tool: must be a table, not "
            f"{type(tool.unwrap()).__name__}",
            file=str(path),
            line=line,
            key="tool",
            hint="make `tool` a table ([tool.something] sections), "
            "then run `lockguard init --pyproject` again",
        )
    if "lockguard" in tool:
        if not force:
            raise InputError(
                f"{path} already has [tool.lockguard]",
                file=str(path),
                key="tool.lockguard",
                hint="pass --force to replace it, or edit it by hand",
            )
        del tool["lockguard"]
    tool.add("lockguard", _table(values, notes))
    return tomlkit.dumps(doc)


def add_profile(
    text: str,
    profile: str,
    values: Mapping[str, object],
    *,
    in_pyproject: bool,
    force: bool,
    path: Path,
) -> str:
    """`text` (an intent, or a pyproject.toml with [tool.lockguard]) with `[profiles.PROFILE]`
    holding `values` (only the keys given: the rest comes from the top level), comments kept."""
    doc = tomlkit.parse(text)
    table = doc["tool"]["lockguard"] if in_pyproject else doc
    if "profiles" not in table:
        table.add("profiles", tomlkit.table(is_super_table=True))
    profiles = table["profiles"]
    if profile in profiles:
        if not force:
            raise InputError(
                f"{path} already has [profiles.{profile}]",
                file=str(path),
                key=f"profiles.{profile}",
                hint="pass --force to replace it, or edit it by hand",
            )
        del profiles[profile]
    own = tomlkit.table()
    for key in ("python", "cuda", "channels", "conda", "pip", "indexes"):
        value = values.get(key)
        if value is None or (isinstance(value, list) and not value and key != "channels"):
            continue
        if isinstance(value, (list, tuple)):
            own.add(key, _array([str(v) for v in value]))
        else:
            own.add(key, tomlkit.item(value))
    profiles.add(profile, own)
    return tomlkit.dumps(doc)
