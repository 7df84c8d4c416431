"""The requirements file pip gets from a clean-install: the lock's entries for what the plan
installs, with their hashes and the lock's index options (pip then touches nothing else). Pure."""

from __future__ import annotations

from os import PathLike

from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.names import canonical_name


def requirements_text(
    lock: RequirementsLock, install: list[str], *, find_links: str | PathLike[str] | None = None
) -> str:
    """`find_links`: a links page of the lock's files (a pylock.toml); without an index in the
    lock, pip then looks nowhere else."""
    lines = [f"--index-url {lock.index_url}"] if lock.index_url else []
    if find_links is not None:
        lines += [f"--find-links {find_links}"] + ([] if lock.index_url else ["--no-index"])
    lines += [f"--extra-index-url {url}" for url in lock.extra_index_urls]
    for pin in install:
        entry = lock.entries.get(canonical_name(pin.split("==", 1)[0]))
        if entry is None:
            raise KeyError(pin)
        lines.append(
            f"{entry.name}=={entry.version}"
            + "".join(f" \\\n    --hash=sha256:{h}" for h in entry.hashes)
        )
    return "\n".join(lines) + "\n"
