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


def with_conda_from_knowledge(text: str, why: str, *, in_pyproject: bool) -> str:
    """The intent with `conda-from-knowledge = true` and the reason above it, as the first key of
    the intent (after lockguard.toml's header comments, or under [tool.lockguard]); the text as
    it was where no such place is found."""
    lines = text.splitlines(keepends=True)
    if in_pyproject:
        at = next((i + 1 for i, line in enumerate(lines) if line.strip() == "[tool.lockguard]"), 0)
        if not at:
            return text
    else:
        at = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    comment = [f"# {line}\n" for line in _wrapped(" ".join(why.split()))]
    return "".join([*lines[:at], *comment, "conda-from-knowledge = true\n", *lines[at:]])


def _wrapped(text: str, width: int = 96) -> list[str]:
    out: list[str] = []
    for word in text.split(" "):
        if out and len(out[-1]) + 1 + len(word) <= width:
            out[-1] += " " + word
        else:
            out.append(word)
    return out
