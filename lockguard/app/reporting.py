"""What a session says while it works, to whoever shows it (the cli's Ui and progress lines, or a
test's recorder). Protocols: the sessions speak through these and never import the cli."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Messages(Protocol):
    """Lines on stderr: what was done, warnings, -v detail; `done` ends a live status line."""

    def info(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...

    def debug(self, message: str) -> None: ...

    def done(self) -> None: ...


class ResolveWatch(Protocol):
    """A resolve's progress while it runs: its phases and its sdist builds (a context manager
    around the resolution)."""

    def __enter__(self) -> ResolveWatch: ...

    def __exit__(self, *exc: object) -> None: ...

    def phase(self, text: str) -> None: ...

    def build(self, event: str, filename: str, detail: str = "") -> None: ...


# counts() -> (requests made, metadata read) so far: what a live progress line shows
ResolveWatchFactory = Callable[[Callable[[], tuple[int, int]]], ResolveWatch]


class InstallProgress(Protocol):
    """A clean-install's progress: passing states, lines that stay, warnings."""

    live: bool

    def step(self, message: str) -> None: ...

    def say(self, message: str) -> None: ...

    def warn(self, message: str) -> None: ...

    def close(self) -> None: ...


class SilentWatch:
    """A resolve nobody watches (tests, embedding)."""

    def __enter__(self) -> SilentWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def phase(self, text: str) -> None:
        return None

    def build(self, event: str, filename: str, detail: str = "") -> None:
        return None
