"""Finding and reading the intent: `lockguard.toml`, else `[tool.lockguard]` in `pyproject.toml`.

When both exist, lockguard.toml is used and the caller is told so (`IntentChoice.ignored`); an
invalid `[tool.lockguard]` next to it is an error rather than silently ignored, because a reader of
the repository cannot tell which one is real.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard.errors import InputError
from lockguard.io.project.project_paths import intent_location
from lockguard.io.read import INTENT_LIMIT, is_regular_file, read_bytes, read_text
from lockguard.model.intent import Intent, IntentSource
from lockguard.model.intent_parse import (
    INTENT_FILE,
    PYPROJECT,
    parse_intent,
    parse_toml,
)

if TYPE_CHECKING:
    from lockguard.model.intent_parse import MatchSpecValidator


@dataclass(frozen=True, slots=True)
class IntentChoice:
    """The intent file in use, and a pyproject.toml [tool.lockguard] it shadows."""

    path: Path
    ignored: Path | None = None


def _pyproject_has_table(pyproject: Path) -> bool | None:
    """True/False; None when pyproject.toml cannot be parsed (its error is reported when used)."""
    try:
        text = read_text(pyproject, what="pyproject.toml", limit=INTENT_LIMIT)
    except InputError:
        return None
    if "lockguard" not in text and "\\u" not in text and "\\U" not in text:
        return False  # no key can spell lockguard (escapes aside): no TOML parse needed
    try:
        data = parse_toml(text)
    except (ValueError, RecursionError):
        return None
    tool = data.get("tool")
    return isinstance(tool, dict) and "lockguard" in tool


def choose_intent(start: Path, *, upward: bool = True) -> IntentChoice:
    """The intent of the project `start` lies in: the folder's own, else (`upward`) the nearest
    folder above it that has one, up to the repository's top level (the folder holding `.git`), as
    uv finds its pyproject.toml: `cd mlproj/src && lockguard check` checks mlproj. Outside a
    repository only `start` is looked at (a stray intent above it must never be picked up). None
    found: the error names `start`."""
    if upward and not _holds_an_intent(start):
        for folder in _up_to_the_repository(start)[1:]:
            if _holds_an_intent(folder):
                return _choice_in(folder)
    return _choice_in(start)


def _up_to_the_repository(start: Path) -> list[Path]:
    """`start` and the folders above it up to the nearest one holding `.git`; [start] when no
    folder above holds one."""
    start = Path(os.path.abspath(start))
    chain = [start, *start.parents]
    for index, folder in enumerate(chain):
        if os.path.lexists(folder / ".git"):
            return chain[: index + 1]
    return [start]


def _holds_an_intent(folder: Path) -> bool:
    candidate = folder / INTENT_FILE
    return candidate.exists() or candidate.is_symlink() or _has_table(folder / PYPROJECT)


def _choice_in(start: Path) -> IntentChoice:
    """The intent file of a project folder."""
    candidate = start / INTENT_FILE
    pyproject = start / PYPROJECT
    has_table = _has_table(pyproject)
    if candidate.exists() or candidate.is_symlink():
        return IntentChoice(candidate, pyproject if has_table else None)
    return _pyproject_or_none(start, pyproject, has_table)


def _has_table(pyproject: Path) -> bool:
    has_table = _pyproject_has_table(pyproject) if is_regular_file(pyproject) else False
    # unparsable: an intent if it mentions lockguard at all (its error is then shown)
    if has_table is None:
        has_table = b"lockguard" in _peek(pyproject)
    return has_table


def _pyproject_or_none(start: Path, pyproject: Path, has_table: bool) -> IntentChoice:
    if has_table:
        return IntentChoice(pyproject)
    unreadable = _why_unparsable(pyproject)
    raise InputError(
        f"no intent found in {start}: neither {INTENT_FILE} nor [tool.lockguard] in {PYPROJECT}"
        + (f" ({unreadable})" if unreadable else ""),
        file=str(start),
        hint=(
            "create one with `lockguard init --python 3.11 --cuda 12.1 torch`, "
            "or pass --intent FILE"
        )
        + (
            "; or fix pyproject.toml if its [tool.lockguard] is what you meant"
            if unreadable
            else ""
        ),
    )


def _why_unparsable(pyproject: Path) -> str | None:
    """'pyproject.toml:3 is not valid TOML', when a pyproject.toml exists and cannot be parsed."""
    if not is_regular_file(pyproject):
        return None
    try:
        parse_intent(
            read_text(pyproject, what="pyproject.toml", limit=INTENT_LIMIT),
            pyproject,
            resolve_path=_resolved,
        )
    except InputError as exc:
        if "not valid TOML" in exc.message or "not UTF-8" in exc.message:
            return f"{PYPROJECT}" + (f":{exc.line}" if exc.line else "") + " cannot be read as TOML"
    return None


def project_here() -> bool:
    """Whether the current folder holds an intent (lockguard.toml or [tool.lockguard])."""
    try:
        choose_intent(Path.cwd())
    except InputError:
        return False
    return True


def _peek(path: Path) -> bytes:
    try:
        return read_bytes(path, what="pyproject.toml", limit=INTENT_LIMIT)
    except (InputError, OSError):
        return b""


def find_intent(start: Path, *, upward: bool = True) -> Path:
    return choose_intent(start, upward=upward).path


def load_intent(
    path: Path, *, validate_matchspec: MatchSpecValidator | None = None, validate: bool = True
) -> Intent:
    """Parse and validate an intent file; raise InputError naming file, line and key.
    `validate=False` (the fast check path) skips PEP 508 parsing of requirements; the intent and
    its hash are the same either way."""
    path = Path(path)
    try:
        text = read_text(path, what="intent file", limit=INTENT_LIMIT)
    except FileNotFoundError:
        raise InputError(
            f"intent file {path} does not exist",
            file=str(path),
            hint="create one with `lockguard init`",
        ) from None
    return parse_intent(
        text, path, validate_matchspec=validate_matchspec, validate=validate, resolve_path=_resolved
    )


def _resolved(path: Path) -> str:
    """The intent's absolute path, which its source keeps: its folder resolved, its own name not
    (a symlinked intent is read through the link; the project stays the link's folder)."""
    return intent_location(path)


def source_of(intent: Intent) -> IntentSource:
    """Where a loaded intent was read from: every intent this module loads has its source (only
    an Intent built in memory has none)."""
    if intent.source is None:
        raise ValueError("the intent was not read from a file")
    return intent.source


def load_project(
    intent_path: Path | None,
    *,
    validate_matchspec: MatchSpecValidator | None = None,
    validate: bool = True,
    warn=None,
) -> Intent:
    """The intent of `--intent FILE`, else of the current folder."""
    choice = IntentChoice(Path(intent_path)) if intent_path else choose_intent(Path.cwd())
    return load_chosen(choice, validate_matchspec=validate_matchspec, validate=validate, warn=warn)


def load_chosen(
    choice: IntentChoice,
    *,
    validate_matchspec: MatchSpecValidator | None = None,
    validate: bool = True,
    warn=None,
) -> Intent:
    """Load the chosen intent; a shadowed [tool.lockguard] must still be valid, and is named."""
    intent = load_intent(choice.path, validate_matchspec=validate_matchspec, validate=validate)
    if choice.ignored is not None:
        try:
            load_intent(choice.ignored, validate=False)
        except InputError as exc:
            raise InputError(
                f"{exc.message} (lockguard.toml is the intent in use; this [tool.lockguard] "
                "next to it is invalid)",
                file=exc.file,
                line=exc.line,
                key=exc.key,
                hint="delete one of the two intents: keep lockguard.toml or [tool.lockguard]",
            ) from None
        if warn is not None:
            warn(
                f"using {choice.path.name}; the [tool.lockguard] table in {choice.ignored.name} "
                "is ignored (keep one intent: delete the table, or delete lockguard.toml)"
            )
    return intent
