"""A copy of every lock file lockguard wrote on this machine, keyed by its body hash, so that a
hand edit (LG102) can be shown as the entries that changed rather than only "the hash differs".

Standard library only (the check path reads it). A missing copy (another machine, a CI runner)
only means the check falls back to comparing the file with its sibling views."""

from __future__ import annotations

import os
import re

from lockguard.io.project.cache_folder import cache_folder
from lockguard.model.lazy_pattern import LazyPattern

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the check path avoids it)
if TYPE_CHECKING:
    from pathlib import Path

KEEP = 256  # newest copies kept; each is one lock file (tens of KB)
_HASH = LazyPattern(r"[0-9a-f]{64}")
_SEALED = LazyPattern(r"^#\s*lockguard-body-hash:\s*sha256:([0-9a-f]{64})\s*$", re.M)


def _folder() -> Path:
    from pathlib import Path

    return Path(cache_folder("written"))


def remember(texts) -> None:
    """Keep a copy of each sealed text (best effort: a cache that cannot be written only costs a
    less precise LG102 message)."""
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for text in texts:
            match = _SEALED.search(text[:4096])
            if not match:
                continue
            target = folder / f"{match.group(1)}.txt"
            tmp = folder / f".{match.group(1)}.{os.getpid()}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        copies = sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in copies[KEEP:]:
            old.unlink()
    except OSError:
        pass


def written_copy(body_hash: str) -> str | None:
    """What lockguard wrote under this body hash, if this machine still has it."""
    if not _HASH.fullmatch(body_hash or ""):
        return None
    from lockguard.io.project.textfile import LOCK_LIMIT, read_text_or_none

    try:
        text = read_text_or_none(os.path.join(cache_folder("written"), f"{body_hash}.txt"), what="lock copy", limit=LOCK_LIMIT)
    except Exception:  # a damaged cache entry is no copy
        return None
    match = _SEALED.search(text[:4096]) if text else None
    return text if match and match.group(1) == body_hash else None
