"""The existing lock files of an intent, read before a resolve: their versions are the resolve's
preferences (resolve/preferences.py), their text is what the change report compares with, and
their bytes are part of the resolution memo's key (a resolve now depends on the lock it starts
from).

requirements.lock (per platform) gives the pip side, conda-lock.yml the conda records. A file that
does not parse, or was written for another platform, is not a preference source: one line says so
and that side resolves from scratch; it is never an error (resolve is how a broken lock is fixed).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from lockguard.errors import InputError
from lockguard.io.read import read_lock_text
from lockguard.lockfiles.headers import read_header
from lockguard.model.intent import Intent
from lockguard.model.lock_paths import lock_paths
from lockguard.model.locked import LockedConda, LockedPlatform

PREFERENCE_KINDS = ("requirements", "conda-lock")


@dataclass(frozen=True, slots=True)
class LockTexts:
    """The text of every lock file the intent has (None: missing or unreadable)."""

    by_path: dict[str, str | None]  # relative path -> text
    kinds: dict[str, tuple[str, str | None]]  # relative path -> (kind, platform)
    unreadable: dict[str, str] = field(default_factory=dict)  # relative path -> why

    def of_kind(self, kind: str, platform: str | None = None) -> tuple[str, str | None] | None:
        for relative, (found, where) in self.kinds.items():
            if found == kind and (platform is None or where in (None, platform)):
                return relative, self.by_path.get(relative)
        return None

    def preference_digest(self) -> str:
        """The sha256 of the files a resolve takes preferences from (the memo key holds it)."""
        parts = [
            f"{relative}\0{self.by_path.get(relative)}"
            for relative, (kind, _p) in sorted(self.kinds.items())
            if kind in PREFERENCE_KINDS
        ]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def read_lock_texts(intent: Intent) -> LockTexts:
    root = intent.source.folder if intent.source else os.getcwd()
    texts: dict[str, str | None] = {}
    kinds: dict[str, tuple[str, str | None]] = {}
    unreadable: dict[str, str] = {}
    for relative, kind, platform in lock_paths(intent):
        kinds[relative] = (kind, platform)
        try:
            texts[relative] = read_lock_text(os.path.join(root, relative))
        except InputError as exc:  # a folder, a FIFO, not UTF-8: certainly not a preference source
            texts[relative] = None
            unreadable[relative] = exc.message
    return LockTexts(texts, kinds, unreadable)


def output_digest(texts: LockTexts, outputs: dict[str, str]) -> str:
    """preference_digest() of the lock files once `outputs` (relative path -> text) are written."""
    merged = {relative: outputs.get(relative, text) for relative, text in texts.by_path.items()}
    return LockTexts(merged, texts.kinds).preference_digest()


@dataclass(frozen=True, slots=True)
class PriorLock:
    platforms: dict[str, LockedPlatform]
    notes: tuple[str, ...] = ()  # why a file is not a preference source, one line each

    def platform(self, name: str) -> LockedPlatform | None:
        return self.platforms.get(name)


def prior_lock(intent: Intent, texts: LockTexts) -> PriorLock:
    """The existing lock as preferences, platform by platform."""
    # the lock file readers (PyYAML among them) load when a resolution parses the lock, never
    # for a memo hit, which needs only the texts' digests
    from lockguard.lockfiles.requirements_lock import parse
    from lockguard.lockfiles.syntax import LockSyntaxError

    notes: list[str] = [
        f"{relative} is not a preference source ({why}); resolving without it"
        for relative, why in texts.unreadable.items()
    ]
    conda = _conda_records(texts, notes)
    platforms: dict[str, LockedPlatform] = {}
    for platform in intent.platforms:
        found = texts.of_kind("requirements", platform)
        pip: dict[str, str] = {}
        via: dict[str, tuple[str, ...]] = {}
        if found is not None and found[1] is not None:
            relative, text = found[0], found[1]
            written_for = read_header(text).fields.get("platform")
            if written_for and written_for != platform:
                notes.append(
                    f"{relative} was written for {written_for}, not {platform}: not a preference "
                    "source; its pip side is resolved from scratch"
                )
            else:
                try:
                    entries = parse(text).entries
                except LockSyntaxError as exc:
                    where = f"{relative}:{exc.line}" if exc.line else relative
                    notes.append(
                        f"{where} does not parse ({exc.message}): not a preference source; its pip "
                        "side is resolved from scratch"
                    )
                    entries = {}
                pip = {name: entry.version for name, entry in entries.items()}
                via = {name: entry.via for name, entry in entries.items()}
        records = conda.get(platform, ())
        if pip or records:
            platforms[platform] = LockedPlatform(platform, pip, via, records)
    return PriorLock(platforms, tuple(notes))


def _conda_records(texts: LockTexts, notes: list[str]) -> dict[str, tuple[LockedConda, ...]]:
    found = texts.of_kind("conda-lock")
    if found is None or found[1] is None:
        return {}
    relative, text = found[0], found[1]
    from lockguard.lockfiles.conda_lock import (
        read,  # as in prior_lock: a resolution's, not a memo hit's
    )
    from lockguard.lockfiles.syntax import LockSyntaxError

    try:
        packages = read(text)["package"]
    except LockSyntaxError as exc:
        where = f"{relative}:{exc.line}" if exc.line else relative
        notes.append(
            f"{where} does not parse ({exc.message}): not a preference source; the conda side is "
            "solved from scratch"
        )
        return {}
    out: dict[str, list[LockedConda]] = {}
    for package in packages:
        if package.get("manager") == "conda" and package.get("build"):
            out.setdefault(str(package["platform"]), []).append(
                LockedConda(str(package["name"]), str(package["version"]), str(package["build"]))
            )
    return {platform: tuple(records) for platform, records in out.items()}
