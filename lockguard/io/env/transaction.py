"""A clean-install's transaction: it owns the quarantine (quarantine.py: the manifest, the journal,
the moved files), the engine phase and undoing all of it (undo.py).

Before the engine (and conda) run, before.json lists every file and folder of the prefix (size,
mtime, inode; a link's target: run_listing.py), and each file gets a hard link in shadow/. An
engine replaces a file by writing a new one over it, so a shadow keeps the old bytes of anything it
writes over (after the quarantine moved every outgoing file away, that is only what a staying
distribution shares with an incoming one, such as nvidia/__init__.py). After the engine,
installed.json lists what the run added or replaced, the shadows of replaced files move into the
quarantine (manifest first), and the other shadows go."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.errors import InstallFailed
from lockguard.io.env.file_listing import list_tree
from lockguard.io.env.quarantine import MoveFailed, Quarantine, os_cause
from lockguard.io.env.run_listing import (
    added_by_run,
    engine_part_pending,
    load_listing,
    stat_signature,
    tree_changes,
)
from lockguard.io.env.undo import UndoResult, undo
from lockguard.io.write import write_atomic

__all__ = ["Installed", "Transaction", "UndoResult", "preview", "record_before", "record_installed"]


@dataclass
class Installed:
    added: int = 0
    # written over by pip: old bytes now quarantined
    replaced: list[str] = field(default_factory=list)
    # written in place: old bytes lost (never seen from pip)
    modified: list[str] = field(default_factory=list)


class Transaction:
    """One clean-install run on a prefix: its quarantine, the steps that change the prefix, and
    the undo that puts everything back (when a step fails, or `lockguard restore` asks)."""

    def __init__(self, quarantine: Quarantine) -> None:
        self.quarantine = quarantine

    @classmethod
    def begin(cls, prefix: Path, items: list, **manifest) -> Transaction:
        """The manifest of what will move, written before anything moves (Quarantine.create)."""
        return cls(Quarantine.create(prefix, items, **manifest))

    @classmethod
    def of(cls, prefix: Path, run_id: str) -> Transaction:
        """An earlier run, from its state folder."""
        return cls(Quarantine(prefix, run_id))

    def move_out(self) -> int:
        """Every file of the manifest into the quarantine. A move that fails is undone at once
        with every move before it (InstallFailed: the cause, and that all was put back)."""
        q = self.quarantine
        try:
            return q.move_all()
        except MoveFailed as failed:
            rolled = undo(q)
            marked = q.mark("aborted")
            rolled.journal_error = rolled.journal_error or marked
            back = (
                "everything moved so far was put back"
                if not rolled.journal_error
                else (
                    "everything moved so far was put back (its journal could not record that: "
                    f"{rolled.journal_error})"
                )
            )
            raise InstallFailed(
                f"cannot move {failed.path} into quarantine: {os_cause(failed.error)}; {back}",
                hint=_SPACE_HINT
                if failed.error.errno == 28
                else _ACROSS_HINT
                if failed.error.errno == errno.EXDEV  # the preflight missed it (mounted since)
                else _MOVE_HINT,
            ) from None

    def record_before(self) -> None:
        record_before(self.quarantine)

    def record_installed(self, owners: dict[str, str]) -> Installed:
        return record_installed(self.quarantine, owners)

    def undo(self) -> UndoResult:
        return undo(self.quarantine)

    def preview(self) -> dict:
        return preview(self.quarantine)


_MOVE_HINT = "run as a user that owns the environment and can read every file in it"


_SPACE_HINT = "free some space on the environment's file system and run again"


_ACROSS_HINT = (
    "the file is on another file system than the quarantine; give site-packages and the "
    "environment's .lockguard folder one file system"
)


def record_before(q: Quarantine) -> None:
    """What pip starts from, and a hard link of every file, written before it runs."""
    files, dirs = list_tree(str(q.prefix))
    signatures: dict[str, list] = {}
    made: set[Path] = set()
    for path in files:
        full = q.prefix / path
        found = stat_signature(full)
        if found is None:
            continue
        info, signatures[path] = found
        if stat.S_ISREG(info.st_mode):
            target = q.shadow / path
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            _link(full, target)
    write_atomic(q.before_path, json.dumps({"files": signatures, "dirs": dirs}) + "\n")
    q.log(event="apply-start")


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
        return
    except OSError:
        pass
    # no hard link here (another file system, protected links): a copy
    with contextlib.suppress(OSError):
        shutil.copy2(source, target, follow_symlinks=False)


def record_installed(q: Quarantine, owners: dict[str, str]) -> Installed:
    """After pip: the shadows of files pip wrote over join the quarantine, installed.json lists
    everything the run put in the prefix, and the shadow folder goes."""
    added, replaced, modified, created = tree_changes(q, load_listing(q.before_path))
    q.adopt(
        [
            (p, q.shadow / p, owners.get(p, "unowned"), "the engine wrote the new copy over it")
            for p in replaced
            if (q.shadow / p).is_file()
        ]
    )
    write_atomic(
        q.installed_path, json.dumps({"files": added, "dirs": created, "modified": modified}) + "\n"
    )
    q.log(event="installed", count=len(added))
    shutil.rmtree(q.shadow, ignore_errors=True)
    return Installed(len(added) - len(replaced), replaced, modified)


def preview(q: Quarantine) -> dict:
    """What undo would do, changing nothing (for --dry-run): files to remove, files to put back."""
    events = q.journal()
    remove = len(added_by_run(q)[0]) if engine_part_pending(q, events) else 0
    back = sum(1 for e in q.manifest()["entries"] if os.path.lexists(q.files / e["path"]))
    return {
        "id": q.id,
        "phase": events[-1]["event"] if events else "",
        "remove": remove,
        "put_back": back,
    }
