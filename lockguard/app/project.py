"""The project a command works on: its intent found and parsed, with the MatchSpecs of its conda
side validated through the rattler adapter (imported only for an intent that has conda specs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lockguard.io.project.intent_file import load_project
from lockguard.model.intent import Intent


def load_project_intent(
    intent_path: Path | None,
    *,
    validate_conda: bool = True,
    warn: Callable[[str], None] | None = None,
) -> Intent:
    """Find and parse the intent; MatchSpecs are validated through the rattler adapter."""
    validator = None
    if validate_conda:

        def validator(
            spec: str,
        ):  # the rattler adapter is imported only for an intent with conda specs
            # kept here: the rattler adapter lives in io.index, which an uncached `lockguard check`
            # must not import (tests/test_check_imports.py)
            from lockguard.io.index.conda import matchspec_problem

            return matchspec_problem(spec)

    return load_project(intent_path, validate_matchspec=validator, warn=warn)


def load_one_intent(
    intent_path: Path | None,
    profile: str | None,
    *,
    validate_conda: bool = True,
    warn: Callable[[str], None] | None = None,
) -> Intent:
    """The intent of a command that reads one lock set: the project's own, or with [profiles]
    the one `--profile` names (exit 2 naming the profiles when it names none)."""
    from lockguard.model.profiles import one_profile

    project = load_project_intent(intent_path, validate_conda=validate_conda, warn=warn)
    return one_profile(project, profile)
