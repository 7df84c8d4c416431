"""Which of the lock's files a clean-install downloads for each package it installs. Pure.

A package's candidates are the files its index (or a pylock.toml) lists whose sha256 the lock
names; of those the wheel the target interpreter ranks best is taken (resolve/tags.py's order),
else an sdist. A package with no such file is left to the engine and its index (the plan then
keeps the lock's index options), never guessed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)

from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.dist import DistFile
from lockguard.model.names import canonical_name


@dataclass(frozen=True, slots=True)
class LockedFile:
    """One file the lock names for a package: where it is, and the bytes it must be."""

    name: str
    version: str
    filename: str
    url: str
    sha256: str
    size: int | None = None

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


@dataclass
class Choice:
    files: list[LockedFile]
    missing: list[str]  # name==version with no locked file found: the engine's index finds it


def choose_files(
    install: list[str],
    lock: RequirementsLock,
    candidates: Callable[[str], Iterable[DistFile]],
    rank: Callable[[str], int | None],
) -> Choice:
    """`candidates(name)`: the files an index (or the pylock.toml) lists for it; `rank(filename)`:
    a wheel's priority on the target (lower is better), None when it does not fit."""
    out = Choice([], [])
    for pin in install:
        name, _, version = pin.partition("==")
        entry = lock.entries.get(canonical_name(name))
        hashes = set(entry.hashes) if entry else set()
        found = [f for f in candidates(canonical_name(name)) if f.sha256 in hashes]
        wheels = [(rank(f.filename), f.filename, f) for f in found if f.is_wheel]
        fitting = sorted((r, n, f) for r, n, f in wheels if r is not None)
        sdists = [f for f in found if not f.is_wheel]
        best = fitting[0][2] if fitting else (sdists[0] if sdists else None)
        if best is None or best.sha256 is None:
            out.missing.append(pin)
            continue
        out.files.append(
            LockedFile(
                canonical_name(name), version, best.filename, best.url, best.sha256, best.size
            )
        )
    return out


def link_files(links: Iterable[str]) -> dict[str, list[DistFile]]:
    """A pylock.toml's links (`URL#sha256=HEX`) as files by project name."""
    out: dict[str, list[DistFile]] = {}
    for link in links:
        url, _, fragment = link.partition("#")
        filename = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
        try:
            if filename.endswith(".whl"):
                project = parse_wheel_filename(filename)[0]
            else:
                project = parse_sdist_filename(filename)[0]
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        digest = fragment.partition("sha256=")[2]
        out.setdefault(canonical_name(project), []).append(
            DistFile(filename, url, {"sha256": digest} if digest else {})
        )
    return out
