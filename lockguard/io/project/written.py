"""A copy of every lock file lockguard wrote on this machine, keyed by its body hash, so that a
hand edit (LG102) can be shown as the entries that changed rather than only "the hash differs".

Each copy is an entry of the cache layer (io/cache/). Standard library only (the check path reads
it). A missing copy (another machine, a CI runner) only means the check falls back to comparing
the file with its sibling views."""

from __future__ import annotations

import re

from lockguard.io.cache.store import Store

KEEP = 256  # newest copies kept; each is one lock file (tens of KB)
COPIES = Store("written", 1)
_HASH = re.compile(r"[0-9a-f]{64}")
_SEALED = re.compile(r"^#\s*lockguard-body-hash:\s*sha256:([0-9a-f]{64})\s*$", re.M)


def remember(texts) -> None:
    """Keep a copy of each sealed text (best effort: a cache that cannot be written only costs a
    less precise LG102 message)."""
    kept = False
    for text in texts:
        match = _SEALED.search(text[:4096])
        if not match or COPIES.exists(match.group(1)):  # content-addressed: a copy is there already
            continue
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        kept = COPIES.put(match.group(1), data) or kept
    if kept:
        COPIES.prune(KEEP)


def written_copy(body_hash: str) -> str | None:
    """What lockguard wrote under this body hash, if this machine still has it."""
    if not _HASH.fullmatch(body_hash or ""):
        return None
    data = COPIES.get(body_hash)
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    match = _SEALED.search(text[:4096])
    return text if match and match.group(1) == body_hash else None
