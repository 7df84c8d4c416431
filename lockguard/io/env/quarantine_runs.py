"""The clean-install runs of an environment, as its state folder holds them: what each took out
and installed, its state (a run whose process still holds the prefix's lock is "running", never
"interrupted"), the disk its quarantine takes, and pruning: dropping the oldest runs' quarantines
to get the disk back, after which those runs can no longer be restored."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from lockguard.io.env.file_listing import STATE_DIR
from lockguard.io.env.prefix_lock import live_run
from lockguard.io.env.quarantine import Quarantine, quarantine_root
from lockguard.io.env.state_folder import check_state

INTERRUPTED = (
    "incomplete",
    "restore-interrupted",
)  # the environment is half changed: undo finishes it
RESTORABLE = ("complete", *INTERRUPTED)


@dataclass(frozen=True, slots=True)
class QuarantineInfo:
    id: str
    state: str  # complete, incomplete, restore-interrupted, restored, aborted, running
    count: int  # files quarantined
    moved: int  # of them, still in the quarantine
    created: str
    removed: tuple[str, ...] = ()  # distributions taken out, "name version"
    installed: tuple[str, ...] = ()  # distributions installed, "name==version"
    phase: str = ""  # the last phase the journal reached
    put_back: int = 0  # files an undo has put back so far (an interrupted restore's progress)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "state": self.state,
            "count": self.count,
            "moved": self.moved,
            "created": self.created,
            "removed": list(self.removed),
            "installed": list(self.installed),
            "phase": self.phase,
            "put_back": self.put_back,
        }


def list_quarantines(prefix: Path) -> list[QuarantineInfo]:
    """Every run in the state folder, oldest first; a state folder holding what lockguard does not
    make there (a symlink out, a FIFO) is refused first (exit 2), whoever asks."""
    check_state(prefix)
    root = quarantine_root(prefix)
    if not root.is_dir():
        return []
    live = live_run(prefix)
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        q = Quarantine(prefix, folder.name)
        if not q.manifest_path.exists() and not q.journal_path.exists():
            continue  # not a transaction (nothing lockguard wrote)
        manifest = q.manifest()
        events = q.journal()
        phase = events[-1]["event"] if events else ""
        installed = tuple(str(x) for x in manifest.get("install", []))
        removed = tuple(
            f"{o.get('name')} {o.get('version')}"
            for o in manifest.get("outgoing", [])
            if isinstance(o, dict)
        )
        state = q.state(events)
        if live is not None and live.run == folder.name and state in INTERRUPTED:
            state = "running"  # its process holds the lock: it is working, not interrupted
        last_undo = max(
            (i for i, e in enumerate(events) if e["event"] == "undo-start"), default=len(events)
        )
        # an interrupted restore: counted from files/ (the journal logs a file after it moved,
        # so a restore killed in between is one behind)
        put_back = (
            q.files_back()[0]
            if state == "restore-interrupted"
            else sum(1 for e in events[last_undo:] if e["event"] == "put-back")
        )
        out.append(
            QuarantineInfo(
                folder.name,
                state,
                len(manifest["entries"]),
                len(q.moved_paths(events)),
                str(manifest.get("created", "")),
                removed,
                installed,
                phase,
                put_back,
            )
        )
    return out


def interrupted_quarantines(prefix: Path) -> list[QuarantineInfo]:
    """The runs of the prefix killed before they finished (a clean-install, or a restore of one)."""
    return [q for q in list_quarantines(prefix) if q.state in INTERRUPTED]


def folder_size(folder: Path) -> int:
    """The disk the folder's files take that deleting it gives back: each file once however many
    hard links it has in the folder, and not at all while a link to it lies outside the folder (a
    run killed while the engine ran keeps a hard link of every file of the prefix in shadow/: the
    environment's own bytes, no growth; counted, they made a 539 MB quarantine list as 5.39 GB).
    Symbolic links are not followed."""
    inodes: dict[tuple[int, int], list[int]] = {}  # (device, inode) -> [size, links, seen]
    for base, _dirs, files in os.walk(folder):
        for name in files:
            try:
                info = os.lstat(os.path.join(base, name))
            except OSError:
                continue
            seen = inodes.setdefault((info.st_dev, info.st_ino), [info.st_size, info.st_nlink, 0])
            seen[2] += 1
    return sum(size for size, links, seen in inodes.values() if seen >= links)


def run_size(prefix: Path, qid: str) -> int:
    return folder_size(quarantine_root(prefix) / qid)


def prunable(runs: list[QuarantineInfo], keep: int) -> list[QuarantineInfo]:
    """The runs whose quarantine a prune drops: every undone run (restored or rolled back: nothing
    of it is restorable), and the complete runs but the newest `keep`. Runs are restored newest
    first, so only the oldest ones can go; an interrupted or running run never goes (its
    quarantine holds the only copy of what it moved)."""
    complete = [r for r in runs if r.state == "complete"]
    kept = {r.id for r in complete[len(complete) - keep :]} if keep > 0 else set()
    return [
        r
        for r in runs
        if r.state in ("restored", "aborted") or (r.state == "complete" and r.id not in kept)
    ]


def drop_run(prefix: Path, qid: str) -> None:
    """Delete one run's quarantine: renamed out of quarantine/ first (one atomic step, so a kill
    never leaves a half-deleted run that looks restorable), then deleted."""
    trash = Path(prefix) / STATE_DIR / "trash"
    trash.mkdir(exist_ok=True)
    target = trash / qid
    os.rename(quarantine_root(prefix) / qid, target)
    shutil.rmtree(target)


def clear_trash(prefix: Path) -> None:
    """What a killed prune had renamed but not yet deleted."""
    trash = Path(prefix) / STATE_DIR / "trash"
    if trash.is_dir():
        shutil.rmtree(trash, ignore_errors=True)
