"""The existing lock files of an intent, read before a resolve: their versions are the resolve's
preferences (resolve/preferences.py), their text is what the change report compares with, and
their bytes are part of the resolution memo's key (a resolve now depends on the lock it starts
from).

requirements.lock (per platform) gives the pip side, conda-lock.yml the conda records. A file that
does not parse, or was written for another platform, is not a preference source: one line says so
and that side resolves from scratch; it is never an error (resolve is how a broken lock is fixed).

A file edited by hand (its body hash does not hold) is not a preference source either: the resolve
starts from what lockguard last wrote there (check/lock_origin.py finds it: lockguard's copy on
this machine, or an unedited view of the same pins), and the edit is reverted and reported, or
adopted with --accept-edits (its edited pins become demands, as `--upgrade-package NAME==VERSION`
makes them, so an impossible edit is exit 3, explained).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lockguard.errors import InputError
from lockguard.io.project.project_paths import read_project_lock
from lockguard.io.project.written import written_copy
from lockguard.lockfiles.formats import CONDA_LOCK, REQUIREMENTS, format_of
from lockguard.lockfiles.headers import is_sealed_intact, read_header
from lockguard.model.intent import Intent
from lockguard.model.lock_paths import lock_paths
from lockguard.model.locked import LockedConda, LockedPlatform

# the lock file readers load with a resolution, never for a memo hit (which needs only digests)
if TYPE_CHECKING:
    from lockguard.check.lock_origin import LockFileText, LockOrigin

# (name, edited version or None for a removed pin, the file): a hand edit --accept-edits adopts
Adopted = tuple[str, str | None, str]


@dataclass(frozen=True, slots=True)
class LockTexts:
    """The text of every lock file the intent has (None: missing or unreadable)."""

    by_path: Mapping[str, str | None]  # relative path -> text
    kinds: Mapping[str, tuple[str, str | None]]  # relative path -> (kind, platform)
    unreadable: Mapping[str, str] = field(default_factory=dict)  # relative path -> why

    def of_kind(self, kind: str, platform: str | None = None) -> tuple[str, str | None] | None:
        for relative, (found, where) in self.kinds.items():
            if found == kind and (platform is None or where in (None, platform)):
                return relative, self.by_path.get(relative)
        return None

    def preference_digest(self) -> str:
        """The sha256 of the lock files a resolve starts from (the memo key holds it): all of
        them, since whether a file was edited, and what the other views hold, decides where the
        preferences come from."""
        parts = [f"{relative}\0{self.by_path.get(relative)}" for relative in sorted(self.kinds)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def files(self) -> list[LockFileText]:
        """Every lock file with what lockguard last wrote there: an edited file's copy is looked
        up by the body hash its header still carries."""
        from lockguard.check.lock_origin import LockFileText

        out = []
        for relative, (kind, platform) in self.kinds.items():
            text = self.by_path.get(relative)
            copy = None
            if text is not None and not is_sealed_intact(text):
                recorded = read_header(text).body_hash
                copy = written_copy(recorded) if recorded else None
            out.append(LockFileText(relative, kind, platform, text, copy))
        return out


def read_lock_texts(intent: Intent) -> LockTexts:
    root = intent.source.folder if intent.source else os.getcwd()
    texts: dict[str, str | None] = {}
    kinds: dict[str, tuple[str, str | None]] = {}
    unreadable: dict[str, str] = {}
    for relative, kind, platform in lock_paths(intent):
        kinds[relative] = (kind, platform)
        try:
            texts[relative] = read_project_lock(root, relative)
        # a folder, a FIFO, a symlink out of the project, not UTF-8: certainly not a preference
        # source (resolve refuses all but the last before it resolves: ResolveSession)
        except InputError as exc:
            texts[relative] = None
            unreadable[relative] = exc.message
    return LockTexts(texts, kinds, unreadable)


def output_digest(texts: LockTexts, outputs: dict[str, str]) -> str:
    """preference_digest() of the lock files once `outputs` (relative path -> text) are written."""
    merged = {relative: outputs.get(relative, text) for relative, text in texts.by_path.items()}
    return LockTexts(merged, texts.kinds).preference_digest()


@dataclass(frozen=True, slots=True)
class PriorLock:
    platforms: Mapping[str, LockedPlatform]
    notes: tuple[str, ...] = ()  # why a file is not a preference source, one line each
    adopted: Mapping[str, tuple[Adopted, ...]] = field(default_factory=dict)  # per platform

    def platform(self, name: str) -> LockedPlatform | None:
        return self.platforms.get(name)


def prior_lock(
    intent: Intent, texts: LockTexts, origin: LockOrigin, *, accept_edits: bool = False
) -> PriorLock:
    """The existing lock as preferences, platform by platform: what lockguard last wrote
    (`origin`, from lock_origin(texts)), with the hand edits adopted when asked."""
    notes: list[str] = [
        f"{relative} is not a preference source ({why}); resolving without it"
        for relative, why in texts.unreadable.items()
    ]
    notes += _edit_notes(texts, origin, accept_edits)
    conda = _conda_records(texts, origin, notes)
    platforms: dict[str, LockedPlatform] = {}
    adopted: dict[str, tuple[Adopted, ...]] = {}
    for platform in intent.platforms:
        pip, via = _pip(texts, origin, platform, notes, accept_edits)
        records = conda.get(platform, ())
        if accept_edits:
            adopted[platform] = tuple(origin.adopted(platform, "pip"))
            records = _adopt_conda(records, origin.adopted(platform, "conda"))
        if pip or records:
            platforms[platform] = LockedPlatform(platform, pip, via, records)
    return PriorLock(platforms, tuple(notes), adopted)


def lock_origin(intent: Intent, texts: LockTexts) -> LockOrigin:
    """What lockguard last wrote into the lock files (check/lock_origin.py)."""
    # with the lock file readers (PyYAML among them): a resolution's, never a memo hit's
    from lockguard.check.lock_origin import origin_of

    return origin_of(texts.files(), intent.platforms)


def _edit_notes(texts: LockTexts, origin: LockOrigin, accept_edits: bool) -> list[str]:
    """One line per file edited by hand, before the resolve: where its pins come from now."""
    notes = []
    unknown = [edit.file for edit in origin.edits if not edit.known]
    if unknown:
        were = "was" if len(unknown) == 1 else "were"
        how = (
            "their edited pins are the resolve's preferences (--accept-edits)"
            if accept_edits
            else "the pip side is resolved without preferences from the edited files"
        )
        notes.append(
            f"{', '.join(unknown)} {were} edited by hand (the body does not match the header's "
            f"hash) and no unedited view holds the pins lockguard wrote: {how}"
        )
    for edit in origin.edits:
        if not edit.known:
            continue
        kind, platform = texts.kinds[edit.file]
        form = format_of(kind)
        head = f"{edit.file} was edited by hand (its body does not match its header's hash)"
        if edit.problem:
            head = f"{edit.file} was edited by hand ({edit.problem})"
        source = None  # where a preference source's own pins come from instead
        if edit.file in origin.copies:
            source = "lockguard's copy of it on this machine"
        elif form.pip_preferences and platform is not None and platform in origin.pip_from:
            source = origin.pip_from[platform]
        elif form.conda_preferences and origin.conda_from:
            source = origin.conda_from
        if accept_edits:
            notes.append(f"{head}: its edits are adopted (--accept-edits)")
        elif form.conda_preferences and origin.conda_unknown:
            notes.append(
                f"{head}, and no unedited view holds the conda records lockguard wrote: the "
                "conda side is solved without them"
            )
        elif source is not None and (form.pip_preferences or form.conda_preferences):
            notes.append(
                f"{head}: not a preference source; starting from the pins lockguard wrote, "
                f"as {source} holds them"
            )
        else:
            notes.append(f"{head}: resolving from the lock's own pins, not from its edits")
    return notes


def _pip(
    texts: LockTexts, origin: LockOrigin, platform: str, notes: list[str], accept_edits: bool
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """requirements.lock's pins and `# via` notes as lockguard wrote them (or, when those are
    unknown and --accept-edits is given, as edited)."""
    # the lock file readers load when a resolution parses the lock, never for a memo hit
    from lockguard.lockfiles.requirements_lock import parse
    from lockguard.lockfiles.syntax import LockSyntaxError

    found = texts.of_kind(REQUIREMENTS.kind, platform)
    if found is None or found[1] is None:
        return {}, {}
    relative, text = found[0], found[1]
    if not is_sealed_intact(text):
        copy = origin.copies.get(relative)
        if copy is None:  # lockguard's pins from another view, or unknown
            edited = origin.edited_views.get(relative, {}).get(platform)
            if platform in origin.pip:
                return dict(origin.pip[platform]), {}
            return (dict(edited.pip) if edited and accept_edits else {}), {}
        text = copy
    written_for = read_header(text).fields.get("platform")
    if written_for and written_for != platform:
        notes.append(
            f"{relative} was written for {written_for}, not {platform}: not a preference "
            "source; its pip side is resolved from scratch"
        )
        return {}, {}
    try:
        entries = parse(text).entries
    except LockSyntaxError as exc:
        where = f"{relative}:{exc.line}" if exc.line else relative
        notes.append(
            f"{where} does not parse ({exc.message}): not a preference source; its pip "
            "side is resolved from scratch"
        )
        return {}, {}
    return (
        {name: entry.version for name, entry in entries.items()},
        {name: entry.via for name, entry in entries.items()},
    )


def _conda_records(
    texts: LockTexts, origin: LockOrigin, notes: list[str]
) -> dict[str, tuple[LockedConda, ...]]:
    found = texts.of_kind(CONDA_LOCK.kind)
    if found is None or found[1] is None:
        return {}
    relative, text = found[0], found[1]
    if not is_sealed_intact(text):  # what lockguard wrote: its copy, else environment.yml's
        copy = origin.copies.get(relative)
        if copy is None:
            return {
                platform: tuple(LockedConda(n, v, b) for n, (v, b) in sorted(records.items()))
                for platform, records in origin.conda.items()
                if origin.conda_from and any(build for _v, build in records.values())
            }
        text = copy
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


def _adopt_conda(
    records: tuple[LockedConda, ...], adopted: list[Adopted]
) -> tuple[LockedConda, ...]:
    """The conda records with the hand edits put in their place (a removed record goes)."""
    edited = {name: version for name, version, _file in adopted}
    out = [r for r in records if r.name not in edited]
    for name, text in edited.items():
        if text is not None:
            version, _sep, build = text.partition("=")
            out.append(LockedConda(name, version, build))
    return tuple(sorted(out, key=lambda r: r.name))
