"""A lock file that is not in the form lockguard writes: where, and what is wrong.

The readers are strict because a lock is a contract: a line they skipped would be a pin that
`check` never sees but pip installs (or the other way round). Converted to InputError (exit 2,
file and line) where the file's path is known."""

from __future__ import annotations


class LockSyntaxError(ValueError):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def clip(text: str, limit: int = 80) -> str:
    """A piece of the input for an error message: never the whole of a huge line."""
    text = text.replace("\t", "\\t")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
