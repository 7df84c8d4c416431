"""Where lockguard's stdlib-only caches live (the check path's result cache, parse memo and the
copies of written locks): `LOCKGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/lockguard` (~/.cache), with
the format version in the path. Text, not pathlib: the check path spares its import."""

from __future__ import annotations

import os

FORMAT = "v1"


def cache_folder(kind: str) -> str:
    configured = os.environ.get("LOCKGUARD_CACHE_DIR")
    if configured:
        return os.path.join(configured, FORMAT, kind)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lockguard", FORMAT, kind)
