"""The tests' view of the cache layer's files (lockguard/io/cache/): list the entries of a kind,
read one's payload, rewrite one with another payload (a valid entry: same kind, version and key),
so a test can age, edit or damage what a run kept."""

from __future__ import annotations

import os
from pathlib import Path

from lockguard.io.cache.entry import HEADER_SIZE, MAGIC, header


def entries(kind: str | None = None, root: str | os.PathLike | None = None) -> list[Path]:
    """Every entry file (temporary files excluded) of `kind` (all kinds when None)."""
    base = Path(root or os.environ["LOCKGUARD_CACHE_DIR"]) / "entries"
    folder = base / kind if kind else base
    return sorted(
        p
        for p in folder.rglob("*")
        if not p.name.startswith(".") and p.is_file() and p.parent != folder
    )


def payload(path: Path) -> bytes:
    data = path.read_bytes()
    assert data.startswith(MAGIC), path
    return data[HEADER_SIZE:]


def rewrite(path: Path, new_payload: bytes) -> None:
    """Replace the payload of the entry at `path`, keeping it valid (version and key digest
    kept)."""
    data = path.read_bytes()
    at = len(MAGIC)
    version, digest = int.from_bytes(data[at : at + 4], "big"), data[at + 4 : at + 36]
    path.write_bytes(header(version, digest, new_payload) + new_payload)
