"""The knowledge from the text of `constraints/*.toml` (read by io/knowledge/files.py): every row
validated against the schema, typed tables built.

A malformed row is an InputError naming the file, the line of the row, the table and the key.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias, TypeVar

from lockguard.errors import InputError
from lockguard.knowledge import tables as t
from lockguard.knowledge.components import ComponentPolicy, ComponentRelease, Components
from lockguard.knowledge.schema import SCHEMA, Field
from lockguard.knowledge.sdist_metadata import SdistMetadata, SdistMetadataRow
from lockguard.knowledge.shared_files import SeparateFiles, SharedFiles, WheelFiles
from lockguard.model import toml_read
from lockguard.model.toml_lines import TomlLines

_Row = TypeVar("_Row")
# a row's values by attribute name, checked against the schema: the keyword arguments of its
# table's class
RowValues: TypeAlias = dict[str, object]

# schema.SCHEMA's files, in its order (a test holds them equal)
FILES = (
    "torch.toml",
    "cuda.toml",
    "components.toml",
    "shared_files.toml",
    "conda.toml",
    "extensions.toml",
    "hazards.toml",
    "sdist_metadata.toml",
)

# a file's TOML data and the line of each row of each of its arrays of tables (parse_file)
Parsed: TypeAlias = tuple[dict[str, object], dict[str, list[int | None]]]


def _parse_text(_name: str, text: str) -> Parsed:
    return parse_file(text)


def knowledge_from_files(
    read: Callable[[str], tuple[Path | str, str]],
    validate: bool,
    parse: Callable[[str, str], Parsed] = _parse_text,
) -> t.Knowledge:
    """The knowledge from the text of each of FILES, in their order: `read(name)` gives (the path
    messages name, its text) (io/knowledge/files.py reads them). `validate=False` (the plain
    check) skips the costly checks of `deep` fields (PEP 508 parsing of torch's Requires-Dist);
    the shipped files are validated by the test suite. `parse(name, text)` stands in for
    parse_file (io/knowledge/cache.py keeps the parses); the rows are checked either way."""
    rows: dict[str, list[RowValues]] = {}
    for file_name, tables in SCHEMA.items():
        path, text = read(file_name)
        for table_name, row_list in _rows_of(
            path, parse, file_name, text, tables, validate
        ).items():
            rows[table_name] = row_list
    return _build(rows, tuple(sorted(FILES)))


def parse_file(text: str) -> Parsed:
    """A knowledge file's TOML data and the line of each row of each array of tables. Raises
    ValueError (tomllib's TOMLDecodeError) on bad TOML."""
    data: dict[str, object] = toml_read.loads(text)
    lines = TomlLines(text)
    origins = {
        name: [lines.line_of(name, array_index=i) for i in range(len(rows))]
        for name, rows in data.items()
        if isinstance(rows, list)
    }
    return data, origins


def _rows_of(
    path: Path | str,
    parse: Callable[[str, str], Parsed],
    name: str,
    text: str,
    tables: dict[str, dict[str, Field]],
    validate: bool,
) -> dict[str, list[RowValues]]:
    try:
        data, origins = parse(name, text)
    except ValueError as exc:  # toml_read.TOMLDecodeError
        raise InputError(f"{path} is not valid TOML: {exc}", file=str(path)) from None
    lines = _Lines(text, origins)
    out: dict[str, list[RowValues]] = {}
    for table_name in data:
        if table_name not in tables:
            raise InputError(
                f"{path}:{lines.line_of(table_name) or '?'}: unknown table [[{table_name}]]",
                file=str(path),
                line=lines.line_of(table_name),
                key=table_name,
                hint="known tables here: " + ", ".join(f"[[{n}]]" for n in tables),
            )
    for table_name, fields in tables.items():
        raw_rows = data.get(table_name, [])
        if not isinstance(raw_rows, list):
            raise InputError(
                f"{path}: {table_name} must be an array of tables [[{table_name}]]",
                file=str(path),
                key=table_name,
            )
        out[table_name] = [
            _check_row(path, lines, table_name, index, raw, fields, validate)
            for index, raw in enumerate(raw_rows)
        ]
    return out


class _Lines:
    """Row lines from the parse; other lines (only for an error message) from a scan of the text."""

    def __init__(self, text: str, origins: dict[str, list[int | None]]) -> None:
        self.text = text
        self.origins = origins
        self._scan: TomlLines | None = None

    def row(self, table: str, index: int) -> int | None:
        rows = self.origins.get(table)
        return (
            rows[index]
            if rows is not None and index < len(rows)
            else self.line_of(table, array_index=index)
        )

    def line_of(self, *keys: str, array_index: int | None = None) -> int | None:
        if self._scan is None:
            self._scan = TomlLines(self.text)
        return self._scan.line_of(*keys, array_index=array_index)


def _check_row(
    path: Path | str,
    lines: _Lines,
    table: str,
    index: int,
    raw: dict[str, object],
    fields: dict[str, Field],
    validate: bool,
) -> RowValues:
    def fail(key: str, message: str) -> InputError:
        line = (
            lines.line_of(table, key, array_index=index)
            if key
            else lines.line_of(table, array_index=index)
        )
        return InputError(
            f"{path}:{line or '?'}: [[{table}]] #{index + 1}, key '{key}': {message}",
            file=str(path),
            line=line,
            key=f"{table}[{index}].{key}",
            hint="fix the row; every row needs the keys of its table and a source",
        )

    for key in raw:
        if key not in fields:
            raise fail(key, "is not a key of this table (known: " + ", ".join(fields) + ")")
    row: RowValues = {
        "origin": (
            f"constraints/{os.path.basename(os.fspath(path))}:{lines.row(table, index) or '?'}"
        )
    }
    for key, spec in fields.items():
        attr = spec.attr or key.replace("-", "_")
        if key not in raw:
            if spec.required:
                raise fail(key, "is missing")
            row[attr] = None
            continue
        value = raw[key]
        if not isinstance(value, spec.kind) or (spec.kind is int and isinstance(value, bool)):
            raise fail(key, f"must be {_kind_name(spec.kind)}, not {type(value).__name__}")
        if spec.check is not None and (validate or not spec.deep):
            try:
                value = spec.check(value)
            except Exception as exc:  # packaging and our parsers raise several types
                raise fail(key, f"invalid value {raw[key]!r}: {exc}") from None
        if isinstance(value, list):
            value = tuple(value)
        row[attr] = value
    return row


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names: dict[object, str] = {
        str: "a string",
        int: "an integer",
        bool: "true or false",
        list: "a list",
        dict: "a table",
    }
    return names.get(kind, str(kind))


def _build(rows: dict[str, list[RowValues]], files: tuple[str, ...]) -> t.Knowledge:
    def make(cls: Callable[..., _Row], table: str) -> tuple[_Row, ...]:
        return tuple(cls(**row) for row in rows.get(table, []))

    return t.Knowledge(
        releases=make(t.TorchRelease, "release"),
        patches=make(t.TorchPatch, "patch"),
        archs=make(t.ArchRow, "arch"),
        toolkits=make(t.Toolkit, "toolkit"),
        cuda_specs=make(t.CondaSpecsRow, "cuda-specs"),
        build_specs=make(t.CondaSpecsRow, "build-specs"),
        python_specs=make(t.CondaSpecsRow, "python-specs"),
        sysroots=make(t.SysrootRow, "sysroot"),
        libraries=make(t.LibraryRow, "library"),
        python_names=make(t.PythonNameRow, "python-name"),
        nvcc_rules=make(t.NvccRule, "nvcc-rule"),
        gpu_rules=make(t.GpuRule, "gpu-rule"),
        torch_pins=make(t.TorchPinRule, "torch-pin"),
        hazards=make(t.Hazard, "hazard"),
        components=Components(
            make(ComponentRelease, "cuda-release"), make(ComponentPolicy, "component-policy")
        ),
        wheel_files=WheelFiles(
            make(SharedFiles, "shared-files"), make(SeparateFiles, "separate-files")
        ),
        sdist_metadata=SdistMetadata(make(SdistMetadataRow, "sdist-metadata")),
        files=files,
    )
