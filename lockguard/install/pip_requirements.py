"""The requirements file pip gets from a clean-install: the lock's entries for what the plan
installs, with their hashes and the lock's index options (pip then touches nothing else). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike

from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.names import canonical_name


def requirements_text(
    lock: RequirementsLock,
    install: list[str],
    *,
    find_links: Sequence[str | PathLike[str]] = (),
    no_index: bool = False,
) -> str:
    """`find_links`: where the lock's files are: folders (each of lockguard's cached files has
    its own) and a links page (a pylock.toml's files); without an index in the lock, or with
    `no_index` (every file is found there), the engine then looks nowhere else."""
    lines = [f"--index-url {lock.index_url}"] if lock.index_url and not no_index else []
    if find_links:
        lines += [f"--find-links {where}" for where in find_links]
        lines += [] if lock.index_url and not no_index else ["--no-index"]
    if not no_index:
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
