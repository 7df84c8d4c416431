"""The first step of `lockguard resolve`: the index pages of the intent's own names requested in
the background (io/index/early.py) before the resolver is imported, so the answers arrive while
app/resolve_session.py and the resolution load. Its own module, so the resolve command can call it
before it imports the session."""

from __future__ import annotations

from pathlib import Path

from lockguard.io.index.early import start


def prefetch(intent_path: Path | None, *, refresh: bool, offline: bool) -> None:
    """Request the index pages of the intent's own names now, in the background, while the intent
    is read and the resolver is imported (io/index/early.py); the resolve takes their answers."""
    start(intent_path, refresh=refresh, offline=offline)
