"""What a resolve gives back (app/resolve_session.py, and app/profile_resolve.py for a project
of profiles): the outcome the command renders, one intent's lock files as resolved, and the
refusals named at their line of the intent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from lockguard.errors import InputError
from lockguard.io.project.intent_file import source_of
from lockguard.io.read import INTENT_LIMIT, read_text
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.intent import Intent
from lockguard.model.intent_parse import PYPROJECT
from lockguard.model.toml_lines import TomlLines

if TYPE_CHECKING:
    from lockguard.check.lock_changes import ChangeReport
    from lockguard.resolve.relock_notes import Vanished


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolveOutcome:
    """What a resolve did: the changes against the lock found, and either the files written (with
    the --json summary) or, for --check, the lock files a resolve would rewrite and the locked
    versions that vanished from the index."""

    changes: ChangeReport
    checked: bool  # --check: nothing was written
    written: tuple[Path, ...] = ()
    summary: Mapping[str, object] = field(default_factory=dict)
    stale: tuple[Path, ...] = ()
    vanished: tuple[Vanished, ...] = ()

    @property
    def current(self) -> bool:
        """--check's verdict: nothing a resolve would rewrite, no locked version vanished."""
        return not (self.stale or self.vanished)

    @property
    def exit_code(self) -> int:
        return 0 if self.current else 1


class Resolved:
    """What a resolve produced: the lock files' text by path, the platforms resolved, and the
    --json summary without its "written" list. `remembered`: it came from the resolution memo
    (lock files that passed the check gate for these very inputs when they were memoized)."""

    def __init__(
        self,
        outputs: dict[Path, str],
        platforms: tuple[str, ...],
        summary: dict,
        remembered: bool = False,
    ) -> None:
        self.outputs = outputs
        self.platforms = platforms
        self.summary = summary
        self.remembered = remembered


def requirement_line(intent: Intent, name: str) -> tuple[Path, int | None]:
    """The intent file and the line of its pip requirement of `name` (canonical)."""
    path = source_of(intent).path
    element = next((r for r in intent.pip if canonicalize_name(_name_of(r)) == name), None)
    base = ("tool", "lockguard") if path.name == PYPROJECT else ()
    line = TomlLines(read_text(path, what="intent file", limit=INTENT_LIMIT), base).line_of(
        "pip", element=element
    )
    return path, line


def at_requirement_line(exc: Unsatisfiable, intent: Intent) -> Unsatisfiable:
    """An intent requirement no release meets, named with its line (still exit 3)."""
    if exc.requirement is None:
        return exc
    path, line = requirement_line(intent, canonicalize_name(exc.requirement))
    where = f"{path}:{line}" if line else str(path)
    return Unsatisfiable(f"{where}: pip: {exc.message}", conflicts=exc.conflicts, hint=exc.hint)


def at_its_line(exc, intent: Intent, near: Sequence[str] = ()):
    """The unknown project's requirement, at its line of the intent, with the pages that said so
    and the known names close to it."""
    path, line = requirement_line(intent, exc.name)
    pages = ", ".join(f"{index}/{exc.name}/" for index in intent.indexes)
    where = f"{path}:{line}" if line else str(path)
    return InputError(
        f"{where}: pip: no index has a project named {exc.name} ({pages}: not found)",
        file=str(path),
        line=line,
        key="pip",
        hint=(f"did you mean {' or '.join(repr(n) for n in near)}? " if near else "") + exc.hint,
    )


def _name_of(requirement: str) -> str:
    return Requirement(requirement).name
