"""The one exception root and its exit codes.

Subclasses carry fields, never markup; the CLI's error boundary renders them and maps them to the
exit codes of the contract (the README's "Commands" section): 1 findings, 2 bad input,
3 unsatisfiable intent, 4 package source unreachable, 5 install failed and rolled back.
`Unsatisfiable` lives beside the values it carries, in model/conflict.py: every command loads
this module (the cached check too, which needs neither dataclasses nor typing).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_UNSATISFIABLE = 3
EXIT_UNREACHABLE = 4
EXIT_INSTALL_FAILED = 5
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in lockguard, not the user's input


class LockguardError(Exception):
    """Root of every error lockguard reports to a user."""

    exit_code = EXIT_BAD_INPUT
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict:
        data = {"kind": self.kind, "message": self.message}
        if self.hint:
            data["hint"] = self.hint
        return data

    def details(self) -> list[str]:
        """Lines shown under the message (an error with facts to list overrides it)."""
        return []


class InputError(LockguardError):
    """Bad input: a malformed or missing file, a bad option value. Names file, line and key."""

    exit_code = EXIT_BAD_INPUT
    kind = "bad-input"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.file = file
        self.line = line
        self.key = key

    @property
    def location(self) -> str | None:
        if not self.file:
            return None
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_dict(self) -> dict:
        data = super().to_dict()
        data.update(
            {k: v for k, v in (("file", self.file), ("line", self.line), ("key", self.key)) if v}
        )
        return data


class BuildFailed(InputError):
    """An sdist's metadata could not be built: the resolver skips that candidate while it looks
    for others, and reports this error only when the candidate mattered."""

    def __init__(
        self, message: str, *, filename: str, hint: str | None = None, lasting: bool = False
    ) -> None:
        super().__init__(message, hint=hint)
        self.filename = filename
        # the sdist itself fails (its backend), not the network: worth remembering
        self.lasting = lasting


class UnknownProject(InputError):
    """An intent requirement names a project no index has (`transformerz`): a typo in the input,
    not an unsatisfiable intent. The command that knows the intent file adds its line."""

    def __init__(self, name: str, requirement: str) -> None:
        super().__init__(
            f"no index has a project named {name}",
            key="pip",
            hint=f"check the spelling of {requirement!r} in the intent's pip list, "
            "or add the index "
            "that publishes it to `indexes`",
        )
        self.name = name
        self.requirement = requirement


class SourceUnreachable(LockguardError):
    """A package index or channel could not be reached and no cache can serve."""

    exit_code = EXIT_UNREACHABLE
    kind = "unreachable"

    def __init__(self, message: str, *, url: str | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.url = url

    def to_dict(self) -> dict:
        data = super().to_dict()
        if self.url:
            data["url"] = self.url
        return data


class InstallFailed(LockguardError):
    """Applying a lock failed; what was changed has been rolled back."""

    exit_code = EXIT_INSTALL_FAILED
    kind = "install-failed"


class EngineUnreachable(LockguardError):
    """A cluster engine (a Ray cluster, the Kubernetes API) could not be reached
    (`lockguard fleet run`)."""

    exit_code = EXIT_UNREACHABLE
    kind = "engine-unreachable"
