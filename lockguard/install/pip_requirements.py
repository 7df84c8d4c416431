"""The requirements files pip gets from a clean-install: the lock's entries for what the plan
installs (with their hashes and the lock's index options) to fetch, and the same entries, plus the
hash of each wheel pip built from a hash-checked sdist, to install from the fetched files. Pure."""

from __future__ import annotations

from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.names import canonical_name


def _entries(lock: RequirementsLock, install: list[str], extra: dict[str, list[str]]) -> list[str]:
    lines = []
    for pin in install:
        name = canonical_name(pin.split("==", 1)[0])
        entry = lock.entries.get(name)
        if entry is None:
            raise KeyError(name)
        hashes = list(entry.hashes) + [h for h in extra.get(name, []) if h not in entry.hashes]
        lines.append(f"{entry.name}=={entry.version}" + "".join(f" \\\n    --hash=sha256:{h}" for h in hashes))
    return lines


def fetch_text(lock: RequirementsLock, install: list[str]) -> str:
    options = [f"--index-url {lock.index_url}"] if lock.index_url else []
    options += [f"--extra-index-url {url}" for url in lock.extra_index_urls]
    return "\n".join(options + _entries(lock, install, {})) + "\n"


def install_text(lock: RequirementsLock, install: list[str], built: dict[str, list[str]]) -> str:
    """`built`: canonical name -> sha256 of the wheel pip built for it."""
    return "\n".join(_entries(lock, install, built)) + "\n"
