"""Read `lockguard.toml` or `[tool.lockguard]` in `pyproject.toml` into a frozen Intent.

Every error names the file, the line and the key, and suggests the nearest valid key for a typo.
Conda MatchSpecs are checked by an injected validator (rattler lives behind `lockguard.io`), so
the fast `lockguard check` path can load an intent without importing rattler.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
from collections.abc import Callable, Iterable
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar, overload
from urllib.parse import urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from lockguard.errors import InputError
from lockguard.model import toml_read
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
from lockguard.model.lock_paths import lock_paths
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
    "conda-from-knowledge",
    "glibc",
    "name",
    "dependency-metadata",
    "outputs",
)
OUTPUT_KEYS = ("environment", "requirements", "conda-lock", "pylock")
DEPENDENCY_METADATA_KEYS = ("name", "version", "requires-dist", "requires-python")
CONDA_SUBDIRS = ("linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64")

_CHANNEL_NAME = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
_URL = re.compile(r"(https?|file)://\S+")
_GLIBC = re.compile(r"2\.\d{1,2}", re.ASCII)
# PEP 508 names (packaging.utils' rule), ASCII only
_PROJECT_NAME = re.compile(r"([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])", re.IGNORECASE | re.ASCII)
_PLAIN_URL = re.compile(
    r"https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::(\d{1,5}))?(?:/[^\s\\]*)?", re.ASCII
)
_HOST = re.compile(
    r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?",
    re.ASCII,
)
# PEP 751: pylock.toml or pylock.<name>.toml
_PYLOCK_NAME = re.compile(r"pylock(\.[^./\\]+)?\.toml")


MAX_VALUE = 4096  # characters in one intent value: a requirement, a URL, a MatchSpec
EARLIEST_CUTOFF = datetime(2008, 1, 1, tzinfo=timezone.utc)  # PyPI served no wheels before this

# files a lock output must never replace: the intent, the project's metadata, the VCS
PROTECTED_FILES = {
    "lockguard.toml",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    ".gitignore",
    ".gitattributes",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
}
# the Pythons an intent may name: 3.7 is the oldest with wheels of the CUDA stack (torch 1.13);
# 3.14 the newest final CPython release (a typo such as "3.1" must not resolve to exit 3)
OLDEST_PYTHON = PythonVersion(3, 7)
NEWEST_PYTHON = PythonVersion(3, 14)
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
PROTECTED_FOLDERS = {".git", ".hg", ".svn", ".lockguard", ".venv", "node_modules"}
OUTPUT_SUFFIXES = {
    "environment": (".yml", ".yaml"),
    "conda-lock": (".yml", ".yaml"),
    "requirements": (".lock", ".txt"),
}


def _one_of(items: list[str]) -> str:
    """'3.10, 3.11 or 3.12'"""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _q(value: str, limit: int = 80) -> str:
    """A value quoted for a message: never the whole of a huge input."""
    text = value if len(value) <= limit else f"{value[:limit]}... ({len(value):,} characters)"
    return repr(text)


def _fold(path: str) -> str:
    return posixpath.normpath(path).casefold()


def output_path_problem(value: str, key: str, intent_name: str) -> str | None:
    """Why an `[outputs]` value is not a safe lock file path inside the project, or None.

    Pure and syntactic; the writer also resolves symlinks before writing (io/project/files.py)."""
    if not value or value != value.strip():
        return f"{_q(value)} is empty or has surrounding spaces"
    if any(ord(c) < 32 or c == "\\" for c in value) or len(value) > 255:
        return f"{_q(value)} has control characters, a backslash, or is too long"
    if value.startswith(("/", "~")) or (len(value) > 1 and value[1] == ":"):
        return f"{_q(value)} is not a path relative to the project folder"
    parts = value.split("/")
    if ".." in parts or "" in parts[:-1] or parts[-1] in ("", "."):
        return f"{_q(value)} leaves the project folder or names a folder"
    normalized = posixpath.normpath(value)
    folders = normalized.split("/")[:-1]
    if any(part in PROTECTED_FOLDERS for part in folders):
        return (
            f"{_q(value)} is inside {next(p for p in folders if p in PROTECTED_FOLDERS)}/, "
            "which lockguard never writes"
        )
    name = normalized.rsplit("/", 1)[-1]
    if normalized == intent_name or name in PROTECTED_FILES:
        return f"{_q(value)} would overwrite {name}"
    suffixes = OUTPUT_SUFFIXES.get(key)
    if suffixes and not name.endswith(suffixes):
        return f"{_q(value)} must end with {' or '.join(suffixes)}"
    return None


def url_problem(text: str) -> str | None:
    """Why `text` is not an http(s):// or file:// URL a request can be made to, or None."""
    if not _URL.fullmatch(text):
        return "is not an http(s):// or file:// URL"
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return "has control characters"
    # the usual https://host[:port]/path: no URL parser to import
    plain = _PLAIN_URL.fullmatch(text)
    if plain:
        return (
            None
            if not plain.group(1) or 0 < int(plain.group(1)) <= 65535
            else f"has port {plain.group(1)}, outside 1-65535"
        )
    try:
        parts = urlsplit(text)
        port = parts.port  # raises for a port outside 0-65535 or not a number
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535"
        return f"cannot be parsed ({exc})"
    if parts.scheme == "file":
        return None if parts.path not in ("", "/") else "names no folder"
    host = parts.hostname or ""
    if not host:
        return "names no host"
    if port == 0:
        return "has port 0"
    if "[" not in parts.netloc and not _HOST.fullmatch(host):
        return f"has a host name that is not valid ({_q(host)})"
    return None


def _close(word: str, choices: Iterable[str], n: int = 1, cutoff: float = 0.5) -> list[str]:
    return difflib.get_close_matches(word, choices, n=n, cutoff=cutoff)


def _clip_text(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def toml_error_line(text: str, message: str) -> tuple[int | None, str]:
    """(the line to blame, an extra note) for a tomllib error message.

    tomllib reports where it noticed the problem; for an unclosed array or inline table that is
    the next key or the end of the document, so the line where the bracket opened is named too."""
    match = re.search(r"at line (\d+)(?:, column (\d+))?", message)
    line = int(match.group(1)) if match else None
    column = int(match.group(2)) if match and match.group(2) else None
    if line is None and "end of document" in message:
        line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    opened = _unclosed_bracket_line(text, line)
    if (
        opened is not None
        and opened != line
        and (
            "nclosed" in message
            or "end of document" in message
            or "Invalid value" in message
            or "Expected" in message
        )
    ):
        return opened, f" (the bracket opened on line {opened} is not closed before line {line})"
    if line is not None and column is not None and _comma_before_brace(text, line, column):
        return line, (
            " (a comma before an inline table's `}` is TOML 1.1; Python reads TOML 1.0, which "
            "allows none there: remove the comma)"
        )
    return line, ""


def _comma_before_brace(text: str, line: int, column: int) -> bool:
    """Whether the parser stopped at the `}` of an inline table right after a comma: TOML 1.1
    allows that comma, the TOML 1.0 of tomllib (Python 3.11-3.14) and of tomli < 2.4 does not."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines) or column < 1:
        return False
    row = lines[line - 1]
    return row[column - 1 : column] == "}" and row[: column - 1].rstrip().endswith(",")


def _unclosed_bracket_line(text: str, upto: int | None) -> int | None:
    """The line of the outermost `[` / `{` value bracket still open before line `upto`."""
    stack: list[int] = []
    for number, line in enumerate(text.splitlines()[: upto or None], start=1):
        quote = None
        for index, char in enumerate(line):
            if quote:
                if char == quote and line[index - 1] != "\\":
                    quote = None
                continue
            if char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{" and (stack or "=" in line[:index]):
                stack.append(number)
            elif char in "]}" and stack:
                stack.pop()
    return stack[0] if stack else None


# brackets deep: far beyond any intent, far below what the TOML parser's recursion allows
_DEEP = 100


def deep_nesting_line(text: str) -> int | None:
    """The line where `[`/`{` brackets first open more than _DEEP deep (quotes and comments
    aside)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        quote = None
        for char in line:
            if quote:
                quote = None if char == quote else quote
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{":
                depth += 1
                if depth > _DEEP:
                    return number
            elif char in "]}":
                depth = max(0, depth - 1)
    return None


def parse_toml(text: str) -> dict[str, Any]:
    """The TOML document in `text`, typed as tomllib types it."""
    return toml_read.loads(text)


def name_of(path: Path | str) -> str:
    """The file name of a path (a Path, or its text)."""
    return os.path.basename(path) if isinstance(path, str) else path.name


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
            + f" is not valid TOML: {_clip_text(str(exc))}{detail}",
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
            f"more than {_DEEP} deep",
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
    ):
        self.path = path
        self.lines = lines
        self.validate_matchspec = validate_matchspec
        self.validate = validate

    def fail(
        self,
        key: str,
        message: str,
        *,
        hint: str | None = None,
        element: str | None = None,
        array_index: int | None = None,
    ) -> InputError:
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
                else f'quote it: {key} = "{_clip_text(str(value), 40)}"'
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
                key, "must be a list of strings", hint=f'write {key} = ["{_clip_text(value, 40)}"]'
            )
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a list of strings")
        for item in value:
            self.bounded(key, item)
        return tuple(value)

    # -- the intent --------------------------------------------------------------------------

    def intent(self, data: TomlTable, source: IntentSource) -> Intent:
        self.unknown_keys(data, TOP_KEYS)
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
            conda_from_knowledge=self.boolean(data, "conda-from-knowledge"),
            glibc=self.glibc(data),
            name=self.env_name(data),
            dependency_metadata=self.dependency_metadata(data),
            outputs=self.outputs(data),
            source=source,
        )
        self.distinct_lock_files(intent)
        return intent

    def distinct_lock_files(self, intent: Intent) -> None:
        """Per-platform names (requirements.linux-64.lock) must not collide with another output."""
        seen: dict[str, str] = {}
        for relative, kind, platform in lock_paths(intent):
            folded = _fold(relative)
            if folded in seen:
                raise self.fail(
                    "outputs",
                    f"the {kind} lock file{' for ' + platform if platform else ''} would be "
                    f"{_q(relative)}, which is also the {seen[folded]} lock file",
                    hint="give each [outputs] entry a distinct name",
                )
            seen[folded] = kind + (f" ({platform})" if platform else "")

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
        value = data.get("gpu")
        if value is None:
            return (), False
        if value == "auto":
            return (), True
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(
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
                raise self.fail(
                    "gpu",
                    f"{_q(item)} is not a GPU architecture" + (f": {reason}" if reason else ""),
                    element=item,
                    hint="write sm_XY as nvcc names it, e.g. sm_80 (A100), sm_90 (H100), sm_90a",
                ) from None
            if arch.ptx:
                raise self.fail(
                    "gpu",
                    f"{_q(item)} is a PTX target, not a GPU",
                    element=item,
                    hint=f"write sm_{arch.major}{arch.minor}",
                )
            archs.append(arch)
        return tuple(sorted(set(archs))), False

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
            problem = url_problem(item) if _URL.fullmatch(item) else "is not a channel name or URL"
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
                        f"{_q(item)} is not a valid requirement: {_clip_text(str(exc))}",
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
        if "exclude-newer" not in data:
            return None
        value = data["exclude-newer"]
        if isinstance(value, str):
            text = value
            try:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise self.fail(
                    "exclude-newer",
                    f"{_q(text)} is not an RFC 3339 date-time",
                    hint='e.g. exclude-newer = "2024-03-01T00:00:00Z"',
                ) from None
            if _PLAIN_DATE.fullmatch(text):  # a day alone means its start in UTC, as uv reads it
                value = value.replace(tzinfo=timezone.utc)
        elif isinstance(value, date) and not isinstance(value, datetime):
            value = datetime.combine(value, time(0), tzinfo=timezone.utc)
        if not isinstance(value, datetime):
            raise self.fail(
                "exclude-newer",
                "must be a date-time",
                hint='e.g. exclude-newer = "2024-03-01T00:00:00Z"',
            )
        if value.tzinfo is None:
            raise self.fail(
                "exclude-newer",
                f"{_q(value.isoformat())} has no time zone",
                hint="append Z for UTC, e.g. 2024-03-01T00:00:00Z",
            )
        try:
            value = value.astimezone(timezone.utc)
        except OverflowError:  # year 1 or 9999 shifted by its offset leaves datetime's range
            raise self.fail(
                "exclude-newer",
                f"{_q(value.isoformat())} is not between {EARLIEST_CUTOFF.date()} and now",
                hint='e.g. exclude-newer = "2024-03-01T00:00:00Z"',
            ) from None
        if value < EARLIEST_CUTOFF:
            raise self.fail(
                "exclude-newer",
                f"{value.date()} is before any package index served wheels "
                f"({EARLIEST_CUTOFF.date()}); nothing could be locked",
                hint="use a recent date-time",
            )
        # no OverflowError near 9999-12-31
        if value - timedelta(days=1) > datetime.now(timezone.utc):
            raise self.fail(
                "exclude-newer",
                f"{value.isoformat()} is in the future: the lock would change as "
                "releases appear until then",
                hint="use a past date-time (or remove the key)",
            )
        return value

    def python(self, data: TomlTable) -> PythonVersion:
        text = self.string(data, "python", required=True)
        patch = re.fullmatch(r"(\d+\.\d+)\.\d+", text.strip(), re.ASCII)
        if patch:  # a full version names a release of an interpreter; a lock targets its minor
            raise self.fail(
                "python",
                f"{_q(text)} is a patch release: the intent names major.minor only",
                hint=f'use "{patch.group(1)}"',
            )
        try:
            python = PythonVersion.parse(text)
        except ValueError:
            raise self.fail(
                "python",
                f"{_q(text)} is not a Python version",
                hint='write major.minor, e.g. python = "3.11"',
            ) from None
        if python < OLDEST_PYTHON:
            # "3.1" is most often 3.1x with a digit missing
            guesses = [f"3.{python.minor}{d}" for d in range(10)] if python.major == 3 else []
            known = [g for g in guesses if OLDEST_PYTHON <= PythonVersion.parse(g) <= NEWEST_PYTHON]
            raise self.fail(
                "python",
                f"Python {python} cannot be locked: lockguard locks Python {OLDEST_PYTHON} "
                f"to {NEWEST_PYTHON}",
                hint=f"did you mean {_one_of(known)}?"
                if known
                else f"name a Python from {OLDEST_PYTHON} on",
            )
        if python > NEWEST_PYTHON:
            raise self.fail(
                "python",
                f"Python {python} is not released yet (the newest lockguard knows is "
                f"{NEWEST_PYTHON})",
                hint=f"name a Python from {OLDEST_PYTHON} to {NEWEST_PYTHON}",
            )
        return python

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
        entries = data.get("dependency-metadata", [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise self.fail(
                "dependency-metadata",
                "must be an array of tables",
                hint="write each entry as a [[dependency-metadata]] table",
            )
        prefix = "dependency-metadata."
        result = []
        for index, entry in enumerate(entries):
            self.unknown_keys(entry, DEPENDENCY_METADATA_KEYS, prefix, array_index=index)
            for key in ("name", "version"):
                if not isinstance(entry.get(key), str):
                    raise self.fail(
                        f"{prefix}{key}", "is required and must be a string", array_index=index
                    )
                self.bounded(f"{prefix}{key}", entry[key])
            if not _PROJECT_NAME.fullmatch(entry["name"]):
                raise self.fail(
                    f"{prefix}name",
                    f"{_q(entry['name'])} is not a project name",
                    array_index=index,
                    hint="a name as PyPI spells it: letters, digits, '.', '_' and '-', "
                    "e.g. deepspeed",
                )
            requires = entry.get("requires-dist", [])
            if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
                raise self.fail(
                    f"{prefix}requires-dist", "must be a list of strings", array_index=index
                )
            if "requires-python" in entry and not isinstance(entry["requires-python"], str):
                raise self.fail(
                    f"{prefix}requires-python",
                    "must be a string",
                    array_index=index,
                    hint='a specifier, e.g. requires-python = ">=3.8"',
                )
            metadata = DependencyMetadata(
                entry["name"], entry["version"], tuple(requires), entry.get("requires-python")
            )
            if self.validate:
                self._check_dependency_metadata(metadata, index)
            result.append(metadata)
        return tuple(result)

    def _check_dependency_metadata(self, metadata: DependencyMetadata, index: int) -> None:
        # packaging's requirement parser (markers, tags: about 15 ms) only where requirements are
        # validated: the check path reads the intent with validate=False and never needs it
        from packaging.requirements import InvalidRequirement, Requirement

        prefix = "dependency-metadata."
        try:
            Version(metadata.version)
        except InvalidVersion:
            raise self.fail(
                f"{prefix}version",
                f"{_q(metadata.version)} is not a PEP 440 version",
                array_index=index,
            ) from None
        for item in metadata.requires_dist:
            try:
                Requirement(item)
            except InvalidRequirement as exc:
                raise self.fail(
                    f"{prefix}requires-dist",
                    f"{_q(item)} is not a valid requirement: {_clip_text(str(exc))}",
                    array_index=index,
                    element=item,
                ) from None
        requires_python = metadata.requires_python
        if requires_python is not None:
            try:
                SpecifierSet(requires_python)
            except (InvalidSpecifier, TypeError):
                raise self.fail(
                    f"{prefix}requires-python",
                    f"{_q(requires_python)} is not a specifier",
                    array_index=index,
                ) from None

    def outputs(self, data: TomlTable) -> Outputs:
        table = data.get("outputs", {})
        if not isinstance(table, dict):
            raise self.fail(
                "outputs",
                "must be a table",
                hint="write [outputs] with environment, requirements, conda-lock",
            )
        self.unknown_keys(table, OUTPUT_KEYS, "outputs.")
        defaults = Outputs()
        default_paths = {
            "environment": defaults.environment,
            "requirements": defaults.requirements,
            "conda-lock": defaults.conda_lock,
        }
        values = {
            key: self.string(table, key, "outputs.", default=path)
            for key, path in default_paths.items()
        }
        pylock = self.string(table, "pylock", "outputs.")
        if pylock is not None:
            values["pylock"] = pylock
        claimed: dict[str, str] = {}
        for key, value in values.items():
            problem = output_path_problem(value, key, name_of(self.path))
            if problem:
                raise self.fail(
                    f"outputs.{key}",
                    problem,
                    hint="lock files live in the project folder or below it, "
                    f'e.g. {key} = "{default_paths.get(key, "pylock.toml")}"',
                )
            folded = _fold(value)
            if folded in claimed:
                raise self.fail(
                    f"outputs.{key}",
                    f"names the same file as outputs.{claimed[folded]} ({_q(value)})",
                    hint="each lock file needs its own name",
                )
            claimed[folded] = key
        if pylock is not None and not _PYLOCK_NAME.fullmatch(_file_name(pylock)):
            raise self.fail(
                "outputs.pylock",
                f"{_q(pylock)} is not a PEP 751 lock file name",
                hint="uv and pip read only pylock.toml or pylock.<name>.toml, "
                'e.g. pylock = "pylock.toml"',
            )
        return Outputs(values["environment"], values["requirements"], values["conda-lock"], pylock)


def _file_name(relative: str) -> str:
    return Path(relative).name
