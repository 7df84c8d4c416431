"""The intent's fields whose rules are long enough to read on their own: `python` (a Python a lock
can target), `exclude-newer` (an RFC 3339 time or a plain date, between PyPI's first wheels and
now, or a cooldown span: model/cooldown.py), `exclude-newer-package`, `[[dependency-metadata]]`
and `[outputs]`. model/intent_parse.py's reader calls them; each error goes through the reader,
so it names the file, the line and the key."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Literal, Protocol, TypeAlias, overload

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from lockguard.errors import InputError
from lockguard.model.cooldown import (
    Cutoff,
    SpanError,
    cutoff_of,
    looks_like_span,
    parse_span,
    span_text,
)
from lockguard.model.intent import DependencyMetadata, Outputs
from lockguard.model.intent_values import folded, name_of, output_path_problem
from lockguard.model.intent_values import quoted as _q
from lockguard.model.lock_names import BY_KIND, OUTPUT_NAMES, PYLOCK
from lockguard.model.names import canonical_name, requirement_name, spec_name
from lockguard.model.toml_errors import clip_text
from lockguard.model.versions import GpuArch, PythonVersion

TomlTable: TypeAlias = dict[str, object]  # a table as tomllib gives it
OUTPUT_KEYS = tuple(name.kind for name in OUTPUT_NAMES)


class Reader(Protocol):
    """What these fields need of the intent reader (model/intent_parse.py)."""

    path: Path | str
    validate: bool

    def fail(
        self,
        key: str,
        message: str,
        *,
        hint: str | None = None,
        element: str | None = None,
        array_index: int | None = None,
    ) -> InputError: ...

    def unknown_keys(
        self,
        table: TomlTable,
        allowed: tuple[str, ...],
        prefix: str = "",
        array_index: int | None = None,
    ) -> None: ...

    @overload
    def string(self, table: TomlTable, key: str, prefix: str = "", *, default: str) -> str: ...
    @overload
    def string(
        self, table: TomlTable, key: str, prefix: str = "", *, required: Literal[True]
    ) -> str: ...
    @overload
    def string(self, table: TomlTable, key: str, prefix: str = "") -> str | None: ...

    def bounded(self, key: str, value: str) -> None: ...


DEPENDENCY_METADATA_KEYS = ("name", "version", "requires-dist", "requires-python")

# PEP 508 names (packaging.utils' rule), ASCII only
_PROJECT_NAME = re.compile(r"([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])", re.IGNORECASE | re.ASCII)

# PEP 751: pylock.toml or pylock.<name>.toml
_PYLOCK_NAME = re.compile(r"pylock(\.[^./\\]+)?\.toml")

EARLIEST_CUTOFF = datetime(2008, 1, 1, tzinfo=timezone.utc)  # PyPI served no wheels before this

# the Pythons an intent may name: 3.7 is the oldest with wheels of the CUDA stack (torch 1.13);
# 3.14 the newest final CPython release (a typo such as "3.1" must not resolve to exit 3)
OLDEST_PYTHON = PythonVersion(3, 7)
NEWEST_PYTHON = PythonVersion(3, 14)
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def _one_of(items: list[str]) -> str:
    """'3.10, 3.11 or 3.12'"""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _file_name(relative: str) -> str:
    return Path(relative).name


def exclude_newer(reader: Reader, data: TomlTable) -> datetime | None:
    """The cut-off: a date-time, a plain date, or a cooldown span (now minus it until a resolve
    settles it to the lock's recorded one: app/cooldowns.py)."""
    if "exclude-newer" not in data:
        return None
    return _cutoff(reader, "exclude-newer", data["exclude-newer"]).at


def exclude_newer_span(reader: Reader, data: TomlTable) -> str | None:
    """The canonical span of `exclude-newer = "7 days"` ("P7D"), None for a date."""
    if "exclude-newer" not in data:
        return None
    return _cutoff(reader, "exclude-newer", data["exclude-newer"]).span


# what lockguard itself puts on the conda side of a CUDA intent (resolve/conda_specs.py from
# constraints/conda.toml), named by no pip package
CONDA_ONLY = frozenset({"python", "cuda-version", "cuda-nvcc", "cudnn", "nccl", "gcc", "gxx"})


def refuse_conda_exemptions(
    reader: Reader, data: TomlTable, conda: tuple[str, ...], pip: tuple[str, ...]
) -> None:
    """An exemption that names a conda-side package would change nothing: rattler's solve takes
    one cut-off for all of them (exclude-newer). Said as an error, not ignored; a name that is
    also a pip requirement of the intent (numpy on both sides) is the pip package's."""
    table = data.get("exclude-newer-package", {})
    if not isinstance(table, dict):
        return
    pip_names = {requirement_name(item) for item in pip}
    conda_names = {canonical_name(spec_name(item)) for item in conda} | CONDA_ONLY
    for name in table:
        canonical = canonical_name(name)
        if canonical in conda_names and canonical not in pip_names:
            raise reader.fail(
                f"exclude-newer-package.{name}",
                f"{_q(name)} is a conda package here, and the conda side has one cut-off for "
                "every package (exclude-newer: the conda solver takes one), so this entry "
                "would change nothing",
                hint="remove it; exclude-newer-package applies to pip packages, as uv's does",
            )


def exclude_newer_package(reader: Reader, data: TomlTable) -> tuple[tuple[str, Cutoff], ...]:
    """`exclude-newer-package = { torch = false, vllm = "2026-11-01", trl = "3 days" }`: per
    pip package, no cut-off (false) or its own (a date, a date-time or a span), as uv's
    setting of that name."""
    table = data.get("exclude-newer-package", {})
    if not isinstance(table, dict):
        raise reader.fail(
            "exclude-newer-package",
            "must be a table of package names",
            hint='e.g. exclude-newer-package = { torch = false, vllm = "2026-11-01" }',
        )
    out: dict[str, Cutoff] = {}
    for name, value in table.items():
        key = f"exclude-newer-package.{name}"
        if not _PROJECT_NAME.fullmatch(name):
            raise reader.fail(
                key,
                f"{_q(name)} is not a project name",
                hint="a name as PyPI spells it, e.g. torch",
            )
        canonical = re.sub(r"[-_.]+", "-", name).lower()
        if canonical in out:
            raise reader.fail(key, f"names {canonical} a second time", hint="keep one entry")
        if value is True:
            raise reader.fail(
                key,
                "true is not a cut-off",
                hint="false lifts the cut-off for this package; a date or a span sets its own",
            )
        out[canonical] = Cutoff(None) if value is False else _cutoff(reader, key, value)
    return tuple(sorted(out.items()))


def _cutoff(reader: Reader, key: str, value: object) -> Cutoff:
    if isinstance(value, str) and looks_like_span(value):
        try:
            span = span_text(parse_span(value))
        except SpanError as exc:
            raise reader.fail(
                key,
                f"{_q(value)} is neither a date-time nor a span: {exc}",
                hint=f'e.g. {key} = "7 days" (or "P7D", "1 week", "24 hours"), '
                'or a date: "2024-03-01T00:00:00Z"',
            ) from None
        return Cutoff(cutoff_of(span, datetime.now(timezone.utc)), span)
    return Cutoff(_absolute(reader, key, value))


def _whole_day(reader: Reader, key: str, day: date) -> datetime:
    """A day alone includes that whole day, as uv reads it: uploads before the next day's start.
    uv 0.13.9 takes the machine's time zone for it (`--exclude-newer 2018-12-09` keeps six 1.12.0,
    uploaded 2018-12-10T00:59Z, under TZ=America/Los_Angeles, and leaves it out under UTC);
    lockguard takes UTC on every machine, so a lock never depends on where it was resolved."""
    try:
        return datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)
    except OverflowError:  # 9999-12-31
        raise reader.fail(
            key,
            f"{day.isoformat()} is not between {EARLIEST_CUTOFF.date()} and now",
            hint=f'e.g. {key} = "2024-03-01"',
        ) from None


def _absolute(reader: Reader, key: str, value: object) -> datetime:
    example = f'e.g. {key} = "2024-03-01T00:00:00Z" (or a span: "7 days")'
    if isinstance(value, str):
        text = value
        try:
            value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise reader.fail(
                key, f"{_q(text)} is not an RFC 3339 date-time", hint=example
            ) from None
        if _PLAIN_DATE.fullmatch(text):
            value = _whole_day(reader, key, value.date())
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = _whole_day(reader, key, value)
    if not isinstance(value, datetime):
        raise reader.fail(key, "must be a date-time or a span", hint=example)
    if value.tzinfo is None:
        raise reader.fail(
            key,
            f"{_q(value.isoformat())} has no time zone",
            hint="append Z for UTC, e.g. 2024-03-01T00:00:00Z",
        )
    try:
        value = value.astimezone(timezone.utc)
    except OverflowError:  # year 1 or 9999 shifted by its offset leaves datetime's range
        raise reader.fail(
            key,
            f"{_q(value.isoformat())} is not between {EARLIEST_CUTOFF.date()} and now",
            hint=example,
        ) from None
    if value < EARLIEST_CUTOFF:
        raise reader.fail(
            key,
            f"{value.date()} is before any package index served wheels "
            f"({EARLIEST_CUTOFF.date()}); nothing could be locked",
            hint="use a recent date-time",
        )
    # no OverflowError near 9999-12-31
    if value - timedelta(days=1) > datetime.now(timezone.utc):
        raise reader.fail(
            key,
            f"{value.isoformat()} is in the future: the lock would change as "
            "releases appear until then",
            hint="use a past date-time (or remove the key)",
        )
    return value


def python(reader: Reader, data: TomlTable) -> PythonVersion:
    text = reader.string(data, "python", required=True)
    patch = re.fullmatch(r"(\d+\.\d+)\.\d+", text.strip(), re.ASCII)
    if patch:  # a full version names a release of an interpreter; a lock targets its minor
        raise reader.fail(
            "python",
            f"{_q(text)} is a patch release: the intent names major.minor only",
            hint=f'use "{patch.group(1)}"',
        )
    try:
        python = PythonVersion.parse(text)
    except ValueError:
        raise reader.fail(
            "python",
            f"{_q(text)} is not a Python version",
            hint='write major.minor, e.g. python = "3.11"',
        ) from None
    if python < OLDEST_PYTHON:
        # "3.1" is most often 3.1x with a digit missing
        guesses = [f"3.{python.minor}{d}" for d in range(10)] if python.major == 3 else []
        known = [g for g in guesses if OLDEST_PYTHON <= PythonVersion.parse(g) <= NEWEST_PYTHON]
        raise reader.fail(
            "python",
            f"Python {python} cannot be locked: lockguard locks Python {OLDEST_PYTHON} "
            f"to {NEWEST_PYTHON}",
            hint=f"did you mean {_one_of(known)}?"
            if known
            else f"name a Python from {OLDEST_PYTHON} on",
        )
    if python > NEWEST_PYTHON:
        raise reader.fail(
            "python",
            f"Python {python} is not released yet (the newest lockguard knows is {NEWEST_PYTHON})",
            hint=f"name a Python from {OLDEST_PYTHON} to {NEWEST_PYTHON}",
        )
    return python


def dependency_metadata(reader: Reader, data: TomlTable) -> tuple[DependencyMetadata, ...]:
    entries = data.get("dependency-metadata", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise reader.fail(
            "dependency-metadata",
            "must be an array of tables",
            hint="write each entry as a [[dependency-metadata]] table",
        )
    prefix = "dependency-metadata."
    result = []
    for index, entry in enumerate(entries):
        reader.unknown_keys(entry, DEPENDENCY_METADATA_KEYS, prefix, array_index=index)
        for key in ("name", "version"):
            if not isinstance(entry.get(key), str):
                raise reader.fail(
                    f"{prefix}{key}", "is required and must be a string", array_index=index
                )
            reader.bounded(f"{prefix}{key}", entry[key])
        if not _PROJECT_NAME.fullmatch(entry["name"]):
            raise reader.fail(
                f"{prefix}name",
                f"{_q(entry['name'])} is not a project name",
                array_index=index,
                hint="a name as PyPI spells it: letters, digits, '.', '_' and '-', e.g. deepspeed",
            )
        requires = entry.get("requires-dist", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
            raise reader.fail(
                f"{prefix}requires-dist", "must be a list of strings", array_index=index
            )
        if "requires-python" in entry and not isinstance(entry["requires-python"], str):
            raise reader.fail(
                f"{prefix}requires-python",
                "must be a string",
                array_index=index,
                hint='a specifier, e.g. requires-python = ">=3.8"',
            )
        metadata = DependencyMetadata(
            entry["name"], entry["version"], tuple(requires), entry.get("requires-python")
        )
        if reader.validate:
            _check_dependency_metadata(reader, metadata, index)
        result.append(metadata)
    return tuple(result)


def _check_dependency_metadata(reader: Reader, metadata: DependencyMetadata, index: int) -> None:
    # packaging's requirement parser (markers, tags: about 15 ms) only where requirements are
    # validated: the check path reads the intent with validate=False and never needs it
    from packaging.requirements import InvalidRequirement, Requirement

    prefix = "dependency-metadata."
    try:
        Version(metadata.version)
    except InvalidVersion:
        raise reader.fail(
            f"{prefix}version",
            f"{_q(metadata.version)} is not a PEP 440 version",
            array_index=index,
        ) from None
    for item in metadata.requires_dist:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise reader.fail(
                f"{prefix}requires-dist",
                f"{_q(item)} is not a valid requirement: {clip_text(str(exc))}",
                array_index=index,
                element=item,
            ) from None
    requires_python = metadata.requires_python
    if requires_python is not None:
        try:
            SpecifierSet(requires_python)
        except (InvalidSpecifier, TypeError):
            raise reader.fail(
                f"{prefix}requires-python",
                f"{_q(requires_python)} is not a specifier",
                array_index=index,
            ) from None


def outputs(reader: Reader, data: TomlTable) -> Outputs:
    table = data.get("outputs", {})
    if not isinstance(table, dict):
        raise reader.fail(
            "outputs",
            "must be a table",
            hint="write [outputs] with environment, requirements, conda-lock",
        )
    reader.unknown_keys(table, OUTPUT_KEYS, "outputs.")
    defaults = Outputs()
    values: dict[str, str] = {}
    for name in OUTPUT_NAMES:
        default = name.filename(defaults)
        if default is not None:
            values[name.kind] = reader.string(table, name.kind, "outputs.", default=default)
        elif (value := reader.string(table, name.kind, "outputs.")) is not None:
            values[name.kind] = value  # opt-in: only when [outputs] names it
    claimed: dict[str, str] = {}
    for key, value in values.items():
        problem = output_path_problem(value, key, name_of(reader.path))
        if problem:
            raise reader.fail(
                f"outputs.{key}",
                problem,
                hint="lock files live in the project folder or below it, "
                f'e.g. {key} = "{BY_KIND[key].example}"',
            )
        key_folded = folded(value)
        if key_folded in claimed:
            raise reader.fail(
                f"outputs.{key}",
                f"names the same file as outputs.{claimed[key_folded]} ({_q(value)})",
                hint="each lock file needs its own name",
            )
        claimed[key_folded] = key
    pylock = values.get(PYLOCK.kind)
    if pylock is not None and not _PYLOCK_NAME.fullmatch(_file_name(pylock)):
        raise reader.fail(
            "outputs.pylock",
            f"{_q(pylock)} is not a PEP 751 lock file name",
            hint="uv and pip read only pylock.toml or pylock.<name>.toml, "
            'e.g. pylock = "pylock.toml"',
        )
    return Outputs(
        **{name.field: values[name.kind] for name in OUTPUT_NAMES if name.kind in values}
    )


def gpu(reader: Reader, data: TomlTable) -> tuple[tuple[GpuArch, ...], bool]:
    value = data.get("gpu")
    if value is None:
        return (), False
    if value == "auto":
        return (), True
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise reader.fail(
            "gpu",
            'must be a list of architectures or "auto"',
            hint='e.g. gpu = ["sm_80", "sm_90"]',
        )
    archs = []
    for item in value:
        try:
            arch = GpuArch.parse(item)
        except ValueError as exc:
            reason = str(exc).partition(": ")[
                2
            ]  # why a well-formed name is still no target (sm_80a)
            raise reader.fail(
                "gpu",
                f"{_q(item)} is not a GPU architecture" + (f": {reason}" if reason else ""),
                element=item,
                hint="write sm_XY as nvcc names it, e.g. sm_80 (A100), sm_90 (H100), sm_90a",
            ) from None
        if arch.ptx:
            raise reader.fail(
                "gpu",
                f"{_q(item)} is a PTX target, not a GPU",
                element=item,
                hint=f"write sm_{arch.major}{arch.minor}",
            )
        archs.append(arch)
    return tuple(sorted(set(archs))), False
