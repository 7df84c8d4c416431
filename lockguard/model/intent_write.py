"""Write an intent with tomlkit, keeping an existing pyproject.toml's comments and layout."""

from __future__ import annotations

from pathlib import Path

import tomlkit

from lockguard.errors import InputError


def _table(values: dict) -> tomlkit.items.Table:
    table = tomlkit.table()
    table.add("python", values["python"])
    table.add("cuda", values["cuda"])
    if values.get("channels") is not None:
        table.add("channels", _array(values["channels"]))
    if values.get("conda"):
        table.add("conda", _array(values["conda"]))
    table.add("pip", _array(values.get("pip", [])))
    return table


def _array(items: list[str]) -> tomlkit.items.Array:
    array = tomlkit.array()
    array.extend(items)
    if len(items) > 2:
        array.multiline(True)
    return array


def new_intent_document(values: dict) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment("lockguard intent: what to lock. `lockguard resolve` turns it into lock files."))
    for key, item in _table(values).items():
        doc.add(key, item)
    return tomlkit.dumps(doc)


def add_intent_to_pyproject(text: str, values: dict, *, force: bool, path: Path) -> str:
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise InputError(f"{path} is not valid TOML: {exc}", file=str(path), line=getattr(exc, "line", None)) from None
    tool = doc.get("tool")
    if tool is None:
        tool = tomlkit.table(is_super_table=True)
        doc.add("tool", tool)
    if "lockguard" in tool:
        if not force:
            raise InputError(f"{path} already has [tool.lockguard]", file=str(path), key="tool.lockguard",
                             hint="pass --force to replace it, or edit it by hand")
        del tool["lockguard"]
    tool.add("lockguard", _table(values))
    return tomlkit.dumps(doc)
