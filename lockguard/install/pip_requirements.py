"""The requirements file pip gets from a clean-install: the lock's entries for what the plan
installs, with their hashes and the lock's index options (pip then touches nothing else). Pure."""

from __future__ import annotations

from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.names import canonical_name


def requirements_text(lock: RequirementsLock, install: list[str]) -> str:
    lines = [f"--index-url {lock.index_url}"] if lock.index_url else []
    lines += [f"--extra-index-url {url}" for url in lock.extra_index_urls]
    for pin in install:
        entry = lock.entries.get(canonical_name(pin.split("==", 1)[0]))
        if entry is None:
            raise KeyError(pin)
        lines.append(f"{entry.name}=={entry.version}" + "".join(f" \\\n    --hash=sha256:{h}" for h in entry.hashes))
    return "\n".join(lines) + "\n"
