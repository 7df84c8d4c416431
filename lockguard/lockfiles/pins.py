"""The pins of a lock file as comparable entries, and their digest (the header's `lockguard-pins`).

The body hash tells that a file changed; the pins digest, written next to it, tells whether what
changed is a pin (a name, a version, a conda build) or something else (comments, hashes, index
options, layout), so `check` can say which without lockguard's own copy of what it wrote. Each
lock format's module finds its own entries (`pin_entries`, named in lockfiles/formats.py).
"""

from __future__ import annotations

from lockguard.lockfiles.formats import BY_KIND, CONDA_LOCK
from lockguard.lockfiles.headers import PinEntries, pins_digest_of


def entries(kind: str, text: str) -> PinEntries:
    """name -> (the pinned version, its hashes, its line). Raises LockSyntaxError for a file that
    is not in the form lockguard writes."""
    # (a kind no format has is read as conda-lock.yml, as before the registry)
    return BY_KIND.get(kind, CONDA_LOCK).pin_entries(text)


def pins_digest(kind: str, text: str) -> str:
    """sha256 over the sorted `name==version` pins (hashes and lines left out)."""
    return pins_digest_of(entries(kind, text))
