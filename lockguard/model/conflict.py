"""An unsatisfiable intent: the facts that clash (Conflict) and the error that carries them."""

from __future__ import annotations

from dataclasses import dataclass

from lockguard.errors import EXIT_UNSATISFIABLE, LockguardError


@dataclass(frozen=True, slots=True)
class Conflict:
    """One fact that takes part in an unsatisfiable intent, with where it comes from."""

    fact: str
    source: str | None = None


class Unsatisfiable(LockguardError):
    """The intent cannot be met; `conflicts` names the facts that clash."""

    exit_code = EXIT_UNSATISFIABLE
    kind = "unsatisfiable"

    def __init__(
        self,
        message: str,
        *,
        conflicts: list[Conflict] | None = None,
        hint: str | None = None,
        requirement: str | None = None,
    ):
        super().__init__(message, hint=hint)
        self.conflicts = list(conflicts or [])
        # the one intent requirement (its name) to change: the command names its line
        self.requirement = requirement

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = super().to_dict()
        data["conflicts"] = [{"fact": c.fact, "source": c.source} for c in self.conflicts]
        return data

    def details(self) -> list[str]:
        if not self.conflicts:
            return []
        return ["conflicting facts:"] + [
            f"  - {c.fact}" + (f"  ({c.source})" if c.source else "") for c in self.conflicts
        ]
