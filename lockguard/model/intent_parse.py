"""Read `lockguard.toml` or `[tool.lockguard]` in `pyproject.toml` into a frozen Intent.

Every error names the file, the line and the key, and suggests the nearest valid key for a typo.
Conda MatchSpecs are checked by an injected validator (rattler lives behind `lockguard.io`), so
the fast `lockguard check` path can load an intent without importing rattler.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar, overload

from lockguard.errors import InputError
from lockguard.model import intent_fields, intent_profiles, toml_read
from lockguard.model.intent import (
    DEFAULT_CHANNELS,
    DEFAULT_GLIBC,
    DEFAULT_INDEXES,
    DEFAULT_NAME,
    DEFAULT_PLATFORMS,
    DEFAULT_PYTORCH_INDEX,
    CudaRequest,
    DependencyMetadata,
    Intent,
    IntentSource,
    Outputs,
)
from lockguard.model.intent_values import (
    URL,
    folded,
    name_of,
    url_problem,
)
from lockguard.model.intent_values import quoted as _q
from lockguard.model.lock_names import OUTPUT_NAMES
from lockguard.model.lock_paths import lock_paths
from lockguard.model.toml_errors import DEEP, clip_text, deep_nesting_line, toml_error_line
from lockguard.model.toml_lines import TomlLines
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion

MatchSpecValidator: TypeAlias = Callable[
    [str], "str | None"
]  # why a conda MatchSpec is not valid, or None
TomlTable: TypeAlias = dict[
    str, object
]  # a table as tomllib gives it; the reader checks each value's type
_PathOrText = TypeVar("_PathOrText", bound="Path | str")

INTENT_FILE = "lockguard.toml"
PYPROJECT = "pyproject.toml"

TOP_KEYS = (
    "python",
    "cuda",
    "driver",
    "gpu",
    "platforms",
    "channels",
    "conda",
    "pip",
    "indexes",
    "pytorch-index",
    "exclude-newer",
    "exclude-newer-package",
    "conda-from-knowledge",
    "glibc",
    "name",
    "dependency-metadata",
    "outputs",
    "profiles",
)
OUTPUT_KEYS = tuple(name.kind for name in OUTPUT_NAMES)

CONDA_SUBDIRS = ("linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64")

_CHANNEL_NAME = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
_GLIBC = re.compile(r"2\.\d{1,2}", re.ASCII)


MAX_VALUE = 4096  # characters in one intent value: a requirement, a URL, a MatchSpec


def _close(word: str, choices: Iterable[str], n: int = 1, cutoff: float = 0.5) -> list[str]:
    return difflib.get_close_matches(word, choices, n=n, cutoff=cutoff)


def parse_toml(text: str) -> dict[str, Any]:
    """The TOML document in `text`, typed as tomllib types it."""
    return toml_read.loads(text)


def parse_intent(
    text: str,
    path: _PathOrText,
    *,
    validate_matchspec: MatchSpecValidator | None = None,
    validate: bool = True,
    resolve_path: Callable[[_PathOrText], str] | None = None,
) -> Intent:
    """`resolve_path(path)` gives the text of the file's resolved form, which the intent's source
    keeps (io/ resolves it; without it, the path as given)."""
    in_pyproject = name_of(path) == PYPROJECT
    if text.startswith("\ufeff"):  # Windows editors save one; TOML parsers stop at line 1, column 1
        raise InputError(
            f"{path}:1 starts with a byte order mark (BOM), which TOML does not allow",
            file=str(path),
            line=1,
            hint=f"save {name_of(path)} as UTF-8 without BOM, e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' "
            f"{name_of(path)}",
        )
    try:
        data = parse_toml(text)
    except ValueError as exc:  # toml_read.TOMLDecodeError
        line, detail = toml_error_line(text, str(exc))
        raise InputError(
            f"{path}"
            + (f":{line}" if line else "")
            + f" is not valid TOML: {clip_text(str(exc))}{detail}",
            file=str(path),
            line=line,
            hint="fix the TOML syntax at that line",
        ) from None
    except RecursionError:
        line = deep_nesting_line(text)
        raise InputError(
            f"{path}"
            + (f":{line}" if line else "")
            + " is not valid TOML: arrays or tables nested "
            f"more than {DEEP} deep",
            file=str(path),
            line=line,
            hint="an intent needs at most two levels; fix the value at that line",
        ) from None
    base: tuple[str, ...] = ()
    if in_pyproject:
        base = ("tool", "lockguard")
        tool = data.get("tool")
        table = tool.get("lockguard") if isinstance(tool, dict) else None
        if not isinstance(table, dict):
            raise InputError(
                f"{path} has no [tool.lockguard] table",
                file=str(path),
                hint="add one with `lockguard init --pyproject`, or write lockguard.toml",
            )
        data = table
    reader = _Reader(path, TomlLines(text, base), validate_matchspec, validate)
    location = resolve_path(path) if resolve_path is not None else str(path)  # Path or its text
    return reader.intent(data, IntentSource(location, in_pyproject))


class _Reader:
    """Validates one intent table; every problem becomes an InputError with a line."""

    def __init__(
        self,
        path: Path | str,
        lines: TomlLines,
        validate_matchspec: MatchSpecValidator | None,
        validate: bool = True,
        key_prefix: str = "",
    ):
        self.path = path
        self.lines = lines
        self.validate_matchspec = validate_matchspec
        self.validate = validate
        # "profiles.NAME." for a profile's merged table: its errors name `profiles.NAME.key` and
        # the line in [profiles.NAME] (its header line for a key taken from the top level)
        self.key_prefix = key_prefix

    def fail(
        self,
        key: str,
        message: str,
        *,
        hint: str | None = None,
        element: str | None = None,
        array_index: int | None = None,
    ) -> InputError:
        key = self.key_prefix + key
        line = self.lines.line_of(*key.split("."), array_index=array_index, element=element)
        where = f"{self.path}:{line}" if line else str(self.path)
        return InputError(
            f"{where}: {key}: {message}", file=str(self.path), line=line, key=key, hint=hint
        )

    def unknown_keys(
        self,
        table: TomlTable,
        allowed: tuple[str, ...],
        prefix: str = "",
        array_index: int | None = None,
    ) -> None:
        for key in table:
            if key not in allowed:
                near = _close(key, allowed)
                hint = f"did you mean '{near[0]}'?" if near else "valid keys: " + ", ".join(allowed)
                raise self.fail(
                    prefix + key,
                    f"{_q(key)} is not a valid key",
                    hint=hint,
                    array_index=array_index,
                )

    # -- typed getters ---------------------------------------------------------------------

    @overload
    def string(self, table: TomlTable, key: str, prefix: str = "", *, default: str) -> str: ...
    @overload
    def string(
        self, table: TomlTable, key: str, prefix: str = "", *, required: Literal[True]
    ) -> str: ...
    @overload
    def string(self, table: TomlTable, key: str, prefix: str = "") -> str | None: ...

    def string(
        self,
        table: TomlTable,
        key: str,
        prefix: str = "",
        default: str | None = None,
        required: bool = False,
    ) -> str | None:
        if key not in table:
            if required:
                raise InputError(
                    f"{self.path}: required key '{prefix + key}' is missing",
                    file=str(self.path),
                    line=self.lines.line_of(*prefix.rstrip(".").split(".")) if prefix else None,
                    key=prefix + key,
                    hint=f'add for example {key} = "3.11"'
                    if key == "python"
                    else f'add {key} = "..."',
                )
            return default
        value = table[key]
        if not isinstance(value, str):
            kind = (
                "a table"
                if type(value) is dict
                else "an array"
                if type(value) is list
                else type(value).__name__
            )
            hint = (
                f'write one value in quotes, e.g. {key} = "..."'
                if isinstance(value, (dict, list))
                else f'quote it: {key} = "{clip_text(str(value), 40)}"'
            )
            raise self.fail(prefix + key, f"must be a string, not {kind}", hint=hint)
        self.bounded(prefix + key, value)
        return value

    def bounded(self, key: str, value: str) -> None:
        if len(value) > MAX_VALUE:
            raise self.fail(
                key,
                f"{_q(value)} is longer than the {MAX_VALUE:,} characters any intent value can be",
            )

    def string_list(
        self, table: TomlTable, key: str, default: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, str):
            raise self.fail(
                key, "must be a list of strings", hint=f'write {key} = ["{clip_text(value, 40)}"]'
            )
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a list of strings")
        for item in value:
            self.bounded(key, item)
        return tuple(value)

    # -- the intent --------------------------------------------------------------------------

    def intent(self, data: TomlTable, source: IntentSource) -> Intent:
        self.unknown_keys(data, TOP_KEYS)
        tables = intent_profiles.profile_tables(self, data, TOP_KEYS)
        if not tables:
            return self.one_intent(data, source)
        # a project of profiles: its top level needs no cuda (each profile may set its own)
        project = self.one_intent(data if "cuda" in data else {**data, "cuda": "none"}, source)
        profiles = []
        for name, own in tables.items():
            reader = _Reader(
                self.path,
                self.lines,
                self.validate_matchspec,
                self.validate,
                key_prefix=f"profiles.{name}.",
            )
            merged = intent_profiles.merged_table(data, own)
            if "cuda" not in merged:
                raise reader.fail(
                    "cuda",
                    "is not set, here nor at the top level",
                    hint='set cuda = "12.4" (or "none" for CPU only) in [profiles.'
                    f"{name}] or at the top level",
                )
            profiles.append(
                intent_profiles.profile_intent(reader.one_intent(merged, source), name, own, source)
            )
        project = replace(project, profiles=tuple(profiles))
        self.distinct_lock_files(project)
        return project

    def one_intent(self, data: TomlTable, source: IntentSource) -> Intent:
        """The intent of one table (the top level, or a profile's merged table)."""
        python = self.python(data)

        gpu, gpu_auto = self.gpu(data)
        intent = Intent(
            python=python,
            cuda=self.cuda(data),
            driver=self.driver(data),
            gpu=gpu,
            gpu_auto=gpu_auto,
            platforms=self.platforms(data),
            channels=self.channels(data),
            conda=self.conda_specs(data),
            pip=self.pip_requirements(data),
            indexes=self.urls(data, "indexes", DEFAULT_INDEXES),
            pytorch_index=self.pytorch_index(data),
            exclude_newer=self.exclude_newer(data),
            exclude_newer_span=intent_fields.exclude_newer_span(self, data),
            exclude_newer_package=intent_fields.exclude_newer_package(self, data),
            conda_from_knowledge=self.boolean(data, "conda-from-knowledge"),
            glibc=self.glibc(data),
            name=self.env_name(data),
            dependency_metadata=self.dependency_metadata(data),
            outputs=self.outputs(data),
            source=source,
        )
        intent_fields.refuse_conda_exemptions(self, data, intent.conda, intent.pip)
        self.distinct_lock_files(intent)
        return intent

    def distinct_lock_files(self, intent: Intent) -> None:
        """Per-platform names (requirements.linux-64.lock) must not collide with another output
        (nor, in a project of profiles, with another profile's)."""
        seen: dict[str, str] = {}
        for one in intent.profiles or (intent,):
            of = f" of profile {one.profile}" if one.profile else ""
            for relative, kind, platform in lock_paths(one):
                key_folded = folded(relative)
                if key_folded in seen:
                    raise self.fail(
                        "outputs",
                        f"the {kind} lock file{' for ' + platform if platform else ''}{of} would "
                        f"be {_q(relative)}, which is also the {seen[key_folded]} lock file",
                        hint="give each [outputs] entry a distinct name"
                        if not of
                        else "rename one of the profiles",
                    )
                seen[key_folded] = kind + (f" ({platform})" if platform else "") + of

    def cuda(self, data: TomlTable) -> CudaRequest:
        text = self.string(data, "cuda", required=True)
        if text in ("none", "auto"):
            return CudaRequest(text)
        try:
            return CudaRequest("version", CudaVersion.parse(text).major_minor)
        except ValueError:
            raise self.fail(
                "cuda",
                f"{_q(text)} is not a CUDA version",
                hint='write "X.Y" (e.g. "12.1"), "none" for CPU only, or "auto"',
            ) from None

    def driver(self, data: TomlTable) -> DriverVersion | None:
        text = self.string(data, "driver")
        if text is None:
            return None
        try:
            return DriverVersion.parse(text)
        except ValueError:
            raise self.fail(
                "driver",
                f"{_q(text)} is not an NVIDIA driver version",
                hint='write the driver as nvidia-smi prints it, e.g. driver = "535.104.05"',
            ) from None

    def gpu(self, data: TomlTable) -> tuple[tuple[GpuArch, ...], bool]:
        return intent_fields.gpu(self, data)

    def platforms(self, data: TomlTable) -> tuple[str, ...]:
        values = self.string_list(data, "platforms", DEFAULT_PLATFORMS)
        if not values:
            raise self.fail(
                "platforms", "must name at least one platform", hint='e.g. platforms = ["linux-64"]'
            )
        for item in values:
            if item not in CONDA_SUBDIRS:
                near = _close(item, CONDA_SUBDIRS)
                raise self.fail(
                    "platforms",
                    f"{_q(item)} is not a conda platform",
                    element=item,
                    hint=f"did you mean '{near[0]}'?"
                    if near
                    else "one of " + ", ".join(CONDA_SUBDIRS),
                )
        return tuple(dict.fromkeys(values))

    def channels(self, data: TomlTable) -> tuple[str, ...]:
        values = self.string_list(data, "channels", DEFAULT_CHANNELS)
        for item in values:
            if _CHANNEL_NAME.fullmatch(item):
                continue
            problem = url_problem(item) if URL.fullmatch(item) else "is not a channel name or URL"
            if problem:
                raise self.fail(
                    "channels",
                    f"{_q(item)} {problem}",
                    element=item,
                    hint="use a name (conda-forge), a URL (https://...) or file:///path",
                )
        return values

    def conda_specs(self, data: TomlTable) -> tuple[str, ...]:
        values = self.string_list(data, "conda")
        normalized = []
        for item in values:
            if self.validate_matchspec is not None:
                problem = self.validate_matchspec(item)
                if problem:
                    raise self.fail(
                        "conda",
                        f"{_q(item)} is not a valid conda MatchSpec: {problem}",
                        element=item,
                        hint='e.g. "cuda-nvcc", "gxx >=12,<13", "nccl=2.18"',
                    )
            normalized.append(" ".join(item.split()))
        return tuple(normalized)

    def pip_requirements(self, data: TomlTable) -> tuple[str, ...]:
        values = self.string_list(data, "pip")
        if self.validate:
            # packaging's requirement parser only where requirements are validated (see
            # _check_dependency_metadata)
            from packaging.requirements import InvalidRequirement, Requirement

            for item in values:
                try:
                    Requirement(item)
                except InvalidRequirement as exc:
                    raise self.fail(
                        "pip",
                        f"{_q(item)} is not a valid requirement: {clip_text(str(exc))}",
                        element=item,
                        hint='use PEP 508, e.g. "torch==2.1.*", "numpy<2"',
                    ) from None
        return tuple(" ".join(item.split()) for item in values)

    def urls(self, data: TomlTable, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        values = self.string_list(data, key, default)
        if not values:
            raise self.fail(
                key,
                "must name at least one index",
                hint=f'e.g. {key} = ["https://pypi.org/simple"]',
            )
        for item in values:
            problem = url_problem(item)
            if problem:
                raise self.fail(
                    key,
                    f"{_q(item)} {problem}",
                    element=item,
                    hint="use http(s):// or file:// URLs, e.g. https://pypi.org/simple",
                )
        return tuple(v.rstrip("/") for v in values)

    def pytorch_index(self, data: TomlTable) -> str:
        text = self.string(data, "pytorch-index", default=DEFAULT_PYTORCH_INDEX)
        problem = url_problem(text)
        if problem:
            raise self.fail(
                "pytorch-index",
                f"{_q(text)} {problem}",
                hint="the base under which cuXYZ/ and cpu/ indexes live, "
                "e.g. https://download.pytorch.org/whl",
            )
        return text.rstrip("/")

    def exclude_newer(self, data: TomlTable) -> datetime | None:
        return intent_fields.exclude_newer(self, data)

    def python(self, data: TomlTable) -> PythonVersion:
        return intent_fields.python(self, data)

    def boolean(self, data: TomlTable, key: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, not {_q(repr(value))}")
        return value

    def glibc(self, data: TomlTable) -> str:
        text = self.string(data, "glibc", default=DEFAULT_GLIBC)
        if not _GLIBC.fullmatch(text):
            raise self.fail(
                "glibc",
                f"{_q(text)} is not a glibc version",
                hint='the oldest glibc the lock must run on, e.g. glibc = "2.28"',
            )
        return text

    def env_name(self, data: TomlTable) -> str:
        text = self.string(data, "name", default=DEFAULT_NAME)
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", text):
            raise self.fail(
                "name",
                f"{_q(text)} is not a valid environment name",
                hint="use letters, digits, '.', '_' and '-'",
            )
        return text

    def dependency_metadata(self, data: TomlTable) -> tuple[DependencyMetadata, ...]:
        return intent_fields.dependency_metadata(self, data)

    def outputs(self, data: TomlTable) -> Outputs:
        return intent_fields.outputs(self, data)
