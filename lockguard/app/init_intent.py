"""`lockguard init`'s session: whether an intent exists already, the pyproject.toml it extends, and
the intent validated (as resolve would read it, MatchSpecs through rattler) before it is written
atomically: a bad value never reaches the disk."""

from __future__ import annotations

from pathlib import Path

from lockguard.errors import InputError


def existing_intent(root: Path) -> Path | None:
    from lockguard.io.project.intent_file import find_intent

    try:
        return find_intent(root)
    except InputError:
        return None


def pyproject_text(path: Path) -> str:
    from lockguard.io.read import INTENT_LIMIT, read_text

    return read_text(path, what="pyproject.toml", limit=INTENT_LIMIT)


def validate_intent(text: str, target: Path) -> None:
    """InputError for an intent resolve would refuse."""
    from lockguard.io.index.conda import matchspec_problem
    from lockguard.model.intent_parse import parse_intent

    parse_intent(text, target, validate_matchspec=matchspec_problem)


def write_intent(target: Path, text: str) -> None:
    from lockguard.io.project.files import write_file

    write_file(target, text)
