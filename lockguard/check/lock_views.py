"""Lock file texts as the change report's views (check/lock_changes.py): per platform, the pip
pins and the conda records. Each lock format gives what it holds (lockfiles/formats.py):
requirements.lock and pylock.toml the pip side, environment.yml both sides, conda-lock.yml both
sides of every platform. Pure: parse errors are LockSyntaxError (with the line) for the caller to
report.
"""

from __future__ import annotations

from lockguard.lockfiles.formats import format_of
from lockguard.lockfiles.lock_view import LockView


def views_of(kind: str, text: str, platform: str | None = None) -> dict[str, LockView]:
    """The views one lock file gives, by platform (`platform`: what to call a file that does not
    say; the header's `lockguard-platform` wins; else linux-64, every intent's default)."""
    return format_of(kind).views(text, platform or "linux-64")


def merged(*views: dict[str, LockView]) -> dict[str, LockView]:
    """One view per platform from several files (requirements.lock's pip side and environment.yml's
    conda side of one platform): a side a file holds replaces the same side of the earlier ones."""
    out: dict[str, LockView] = {}
    for found in views:
        for platform, view in found.items():
            before = out.get(platform)
            if before is None:
                out[platform] = view
            else:
                out[platform] = LockView(
                    platform, before.pip or view.pip, view.conda or before.conda
                )
    return out
