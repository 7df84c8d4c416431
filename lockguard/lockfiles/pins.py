"""The pins of a lock file as comparable entries, and their digest (the header's `lockguard-pins`).

The body hash tells that a file changed; the pins digest, written next to it, tells whether what
changed is a pin (a name, a version, a conda build) or something else (comments, hashes, index
options, layout), so `check` can say which without lockguard's own copy of what it wrote. Each
lock format's module finds its own entries (`pin_entries`); this one picks the format by kind.
"""

from __future__ import annotations

from collections.abc import Callable

from lockguard.lockfiles import conda_lock, environment_yml, pylock, requirements_lock
from lockguard.lockfiles.headers import PinEntries, pins_digest_of

_READERS: dict[str, Callable[[str], PinEntries]] = {
    "requirements": requirements_lock.pin_entries,
    "environment": environment_yml.pin_entries,
    "pylock": pylock.pin_entries,
}


def entries(kind: str, text: str) -> PinEntries:
    """name -> (the pinned version, its hashes, its line). Raises LockSyntaxError for a file that
    is not in the form lockguard writes."""
    return _READERS.get(kind, conda_lock.pin_entries)(text)


def pins_digest(kind: str, text: str) -> str:
    """sha256 over the sorted `name==version` pins (hashes and lines left out)."""
    return pins_digest_of(entries(kind, text))
