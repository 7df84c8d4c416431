"""The pins of a lock file as comparable entries, and their digest (the header's `lockguard-pins`).

The body hash tells that a file changed; the pins digest, written next to it, tells whether what
changed is a pin (a name, a version, a conda build) or something else (comments, hashes, index
options, layout), so `check` can say which without lockguard's own copy of what it wrote. Each
lock format's module finds its own entries (`pin_entries`); this one picks the format by kind.
"""

from __future__ import annotations

from lockguard.lockfiles.headers import pins_digest_of


def entries(kind: str, text: str) -> dict[str, tuple[str, tuple, int | None]]:
    """name -> (the pinned version, its hashes, its line). Raises LockSyntaxError for a file that
    is not in the form lockguard writes."""
    if kind == "requirements":
        from lockguard.lockfiles.requirements_lock import pin_entries
    elif kind == "environment":
        from lockguard.lockfiles.environment_yml import pin_entries
    elif kind == "pylock":
        from lockguard.lockfiles.pylock import pin_entries
    else:
        from lockguard.lockfiles.conda_lock import pin_entries
    return pin_entries(text)


def pins_digest(kind: str, text: str) -> str:
    """sha256 over the sorted `name==version` pins (hashes and lines left out)."""
    return pins_digest_of(entries(kind, text))
