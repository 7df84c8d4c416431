"""`lockguard init`'s session: whether an intent exists already, the pyproject.toml it extends, and
the intent validated (as resolve would read it, MatchSpecs through rattler) before it is written
atomically: a bad value never reaches the disk."""

from __future__ import annotations

import re
from pathlib import Path

from lockguard import interrupts
from lockguard.errors import InputError
from lockguard.io.index.conda import matchspec_problem
from lockguard.io.project.files import write_file
from lockguard.io.project.intent_file import find_intent
from lockguard.io.read import INTENT_LIMIT, read_text
from lockguard.model.intent_parse import parse_intent


def environment_name(root: Path) -> str:
    """The project folder's name as a conda environment name: two projects on one machine must not
    both create an environment called `lockguard`. init writes it into the intent (an implicit
    default taken from the folder would make the lock depend on the folder a clone lands in)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.")
    return name or "lockguard"


def existing_intent(root: Path) -> Path | None:
    """The intent `init` would replace: this folder's own (one above is another project's)."""
    try:
        return find_intent(root, upward=False)
    except InputError:
        return None


def pyproject_text(path: Path) -> str:
    return read_text(path, what="pyproject.toml", limit=INTENT_LIMIT)


def validate_intent(text: str, target: Path) -> None:
    """InputError for an intent resolve would refuse."""
    parse_intent(text, target, validate_matchspec=matchspec_problem)


def write_intent(target: Path, text: str) -> None:
    interrupts.now(f"interrupted before {target} was written; nothing was changed")
    written = f"interrupted after {target} was written; it is whole (`lockguard resolve` is next)"
    write_file(target, text, on_commit=lambda: interrupts.now(written))
