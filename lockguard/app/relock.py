"""The existing lock in `lockguard resolve`: read once before anything else, it gives the resolve
its preferences (resolve/preferences.py), the resolution memo the part of its key that the lock
decides, the relock's notes (vanished and yanked locked versions, held-back upgrades) and the
"before" of the change report that every relock prints. A lock file edited by hand is none of
these: what lockguard last wrote there is (io/project/prior_lock.py), and the edit is reported as
a change, reverted or (with --accept-edits) adopted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard.check.lock_changes import (
    ChangeReport,
    HandEdit,
    PlatformChanges,
    SettledEdit,
    report,
)
from lockguard.errors import InputError
from lockguard.io.project.prior_lock import (
    LockTexts,
    PriorLock,
    lock_origin,
    output_digest,
    prior_lock,
    read_lock_texts,
)
from lockguard.model.intent import Intent
from lockguard.model.locked import LockedPlatform
from lockguard.model.names import spec_name
from lockguard.model.shared_pins import SharedPins
from lockguard.model.upgrades import UpgradeRequest

# the resolver's modules load with a resolution (app/resolution.py), never for a memo hit
if TYPE_CHECKING:
    from lockguard.check.lock_origin import LockOrigin
    from lockguard.resolve.relock_notes import KeptYanked, RelockNotes, Vanished


class Relock:
    def __init__(
        self,
        intent: Intent,
        upgrade: UpgradeRequest | None = None,
        accept_edits: bool = False,
        shared: SharedPins | None = None,
    ) -> None:
        self.intent = intent
        # what the project's other profiles ask of this one (app/profile_resolve.py)
        self.shared = shared or SharedPins()
        self.upgrade = upgrade or UpgradeRequest()
        self.accept_edits = accept_edits  # --accept-edits: hand edits are adopted, not reverted
        self.texts: LockTexts = read_lock_texts(intent)
        self._origin: LockOrigin | None = None
        self.notes: list[RelockNotes] = []
        self.missing_conda: list[str] = []  # locked conda records no channel lists any more
        self._prior: PriorLock | None = None
        self.said: list[
            str
        ] = []  # the notes printed: a plain resolve of the same lock does not say them

    # -- the resolution memo -----------------------------------------------------------------------

    def memo_options(self) -> dict[str, str]:
        """What the memo key must hold besides the intent: the lock a resolve starts from (by the
        bytes of its preference sources; --upgrade starts from nothing) and the upgrade asked."""
        lock = "ignored" if self.upgrade.everything else self.texts.preference_digest()
        edits = {"edits": "accept"} if self.accept_edits else {}
        shared = {"shared": self.shared.key()} if self.shared.key() else {}
        return {"lock": lock, "upgrade": self.upgrade.key(), **edits, **shared}

    def memo_options_after(self, outputs: dict[str, str]) -> dict[str, str]:
        """The memo options of the next plain resolve once `outputs` are written: a resolve that
        prefers a lock's own versions gives back that lock (same pages, same inputs), so the
        entry holds for that key too (without the notes of an upgrade: see `said`)."""
        shared = {"shared": self.shared.key()} if self.shared.key() else {}
        return {"lock": output_digest(self.texts, outputs), "upgrade": "", **shared}

    # -- preferences ------------------------------------------------------------------------------

    def origin(self) -> LockOrigin:
        """What lockguard last wrote into the lock files, and the hand edits since."""
        if self._origin is None:
            self._origin = lock_origin(self.intent, self.texts)
        return self._origin

    def prior(self) -> PriorLock:
        if self._prior is None:
            self._prior = prior_lock(
                self.intent, self.texts, self.origin(), accept_edits=self.accept_edits
            )
        return self._prior

    def refuse_unknown_names(self) -> None:
        """--upgrade-package NAME of a name neither in the lock nor in the intent is exit 2."""
        if not self.upgrade.packages:
            return
        # the resolver's requirement helpers, for --upgrade-package only (a plain memo hit needs
        # none)
        from lockguard.resolve.pip_resolve import merged_requirements
        from lockguard.resolve.preferences import unknown_names

        names = {r.name for r in merged_requirements(self.intent.pip)} | {
            spec_name(s) for s in self.intent.conda
        }
        locked = self.prior().platforms.values()
        unknown = unknown_names(self.upgrade, locked, names)
        if unknown:
            raise InputError(
                f"--upgrade-package {', '.join(unknown)}: not in the lock or the intent",
                hint="name a locked package (see requirements.lock) or one the intent asks for",
            )
        pip = {r.name for r in merged_requirements(self.intent.pip)} | {
            n for p in locked for n in p.pip
        }
        for name, version in self.upgrade.packages:
            # a conda package: its version is the intent's conda spec
            if version and name not in pip:
                raise InputError(
                    f"--upgrade-package {name}=={version}: {name} is a conda package; a version "
                    "given here pins pip packages only",
                    hint=f"put {name}=={version} in the intent's conda list, or give the name "
                    "alone",
                )

    def locked(self, platform: str) -> LockedPlatform | None:
        return self.prior().platform(platform)

    # -- after the resolve ------------------------------------------------------------------------

    def vanished(self) -> list[Vanished]:
        return [v for notes in self.notes for v in notes.vanished]

    def say(self, warn, info) -> None:
        """The relock's notes: warnings for what the user must know, info for held-back upgrades."""
        for notes in self.notes:
            told: list[Vanished | KeptYanked] = [*notes.vanished, *notes.yanked]
            for item in told:
                warn(f"{notes.platform}: {item.text()}")
            for back in notes.held_back:
                self.said.append(f"{notes.platform}: {back.text()}")
                info(self.said[-1])
        for record in self.missing_conda:
            warn(
                f"conda {record} is locked, but no channel lists it any more; the conda side was "
                "solved without it"
            )

    def changes(self, outputs: dict[Path, str]) -> ChangeReport:
        """What writing `outputs` changes against what lockguard last wrote (the lock files found
        before the resolve, less their hand edits, which are reported on their own)."""
        root = self.intent.source.root if self.intent.source else Path.cwd()
        after_texts = {str(path.relative_to(root)): text for path, text in outputs.items()}
        if all(self.texts.by_path.get(relative) == text for relative, text in after_texts.items()):
            # the same bytes (a memo hit, most often): unchanged, without parsing a file
            return ChangeReport(tuple(PlatformChanges(p) for p in self.intent.platforms))
        origin = self.origin()
        rewritten = [r for r, t in after_texts.items() if self.texts.by_path.get(r) != t]
        pairs = []
        needs_facts = False
        for platform in self.intent.platforms:
            before = origin.view(platform) or self._view(platform, self.texts.by_path)
            after = self._view(platform, {**self.texts.by_path, **after_texts})
            needs_facts = needs_facts or before != after
            pairs.append((before, after))
        knowledge = None
        if needs_facts:  # an unchanged lock (a memo hit, most often) never loads the knowledge
            from lockguard.io.knowledge.files import load_knowledge

            knowledge = load_knowledge()
        found = report(pairs, knowledge)
        platforms = tuple(
            replace(
                changes,
                rewritten=tuple(
                    r for r in rewritten if self.texts.kinds[r][1] in (None, changes.platform)
                ),
            )
            for changes in found.platforms
        )
        edits = tuple(self._settled(edit, after_texts) for edit in origin.edits)
        return ChangeReport(platforms, edits)

    def _settled(self, edit: HandEdit, after_texts: dict[str, str]) -> SettledEdit:
        """A hand edit with each edited pin's version in the lock files about to be written."""
        from lockguard.check.lock_views import views_of
        from lockguard.lockfiles.syntax import LockSyntaxError

        kind, platform = self.texts.kinds[edit.file]
        after = after_texts.get(edit.file)
        if after is None or after == self.texts.by_path.get(edit.file):
            return SettledEdit(edit, rewritten=False, accepted=self.accept_edits)
        try:
            views = views_of(kind, after, platform)
        except LockSyntaxError:  # never for what resolve renders
            views = {}
        now: list[str | None] = []
        for pin in edit.pins:
            view = views.get(pin.platform)
            if view is None:
                now.append(None)
            elif pin.side == "pip":
                now.append(view.pip.get(pin.name))
            else:
                record = view.conda.get(pin.name)
                now.append(None if record is None else "=".join(p for p in record if p))
        return SettledEdit(edit, tuple(now), rewritten=True, accepted=self.accept_edits)

    def _view(self, platform: str, texts: Mapping[str, str | None]):
        """requirements.lock's pip side and environment.yml's conda side (None: no readable
        lock)."""
        # the lock file readers, only for a lock that changed (a memo hit's bytes are compared
        # above)
        from lockguard.check.lock_views import merged, views_of
        from lockguard.lockfiles.formats import FORMATS
        from lockguard.lockfiles.lock_view import LockView
        from lockguard.lockfiles.syntax import LockSyntaxError

        found = []
        for kind in (f.kind for f in FORMATS if f.primary):
            where = self.texts.of_kind(kind, platform)
            text = texts.get(where[0]) if where else None
            if text is None:
                continue
            try:
                views = views_of(kind, text, platform)
            except LockSyntaxError:
                continue  # an unreadable earlier file: its side counts as new
            view = next(iter(views.values()))
            found.append({platform: LockView(platform, view.pip, view.conda)})
        return merged(*found).get(platform) if found else None
