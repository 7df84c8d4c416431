"""Undoing a clean-install run (transaction.py's undo, what `lockguard restore` and a failed run
call): remove what the run installed (a file changed since moves aside into displaced/), bring
shadowed files back, remove the folders the run created, and put every quarantined file back with
its mode, with the folders the moves emptied. A run killed during the engine has no
installed.json: whatever is not in before.json, or has another inode than it says, is the
engine's.

What the run installed and the user removed since (`pip uninstall`, `rm -rf`) is skipped and
counted (`gone`): the quarantine still goes back. Undo is idempotent: a restore that is itself
interrupted is finished by the next one. Its journal lines are written when they can be: on a
full disk the undo goes on (it goes by what lies in files/), and says that its journal lags.
put_back_file is the one file operation of a put-back (the tests' fault seam wraps it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.errors import InputError, InstallFailed
from lockguard.io.env.file_listing import list_tree
from lockguard.io.env.quarantine import Quarantine, move_file, os_cause, safe_relative
from lockguard.io.env.run_listing import (
    added_by_run,
    engine_part_pending,
    load_listing,
    stat_signature,
)
from lockguard.io.run import start_detached
from lockguard.io.state_paths import is_folder
from lockguard.model.names import canonical_name


@dataclass
class UndoResult:
    removed: int = 0  # files the run had installed, removed
    put_back: int = 0  # quarantined (or shadowed) files put back
    displaced: list[str] = field(default_factory=list)  # changed since: moved aside, not deleted
    # quarantined files changed since: left there
    displaced_in_quarantine: list[str] = field(default_factory=list)
    # installed by the run, removed since by someone else
    gone: list[str] = field(default_factory=list)
    # why the journal could not record the undo (a full disk), if it could not
    journal_error: str = ""
    resumed: bool = False  # an earlier undo of this run was interrupted: `gone` may be its work

    def gone_packages(self) -> list[str]:
        """The distributions among `gone` ("name version" from their .dist-info folders)."""
        out = set()
        for path in self.gone:
            cut = path.find(".dist-info/")
            if cut > 0:
                stem = path[path.rfind("/", 0, cut) + 1 : cut]
                name, _, version = stem.partition("-")
                out.add(f"{canonical_name(name)} {version}".strip())
        return sorted(out)


def undo(q: Quarantine) -> UndoResult:
    """Remove what the run installed and put the quarantine back. A file operation that fails
    stops it (InstallFailed, naming the cause): what is not back yet stays in the quarantine, and
    the next restore finishes the work."""
    events = q.journal()
    pip_part = engine_part_pending(q, events)
    _must_stay_inside(q, events)
    result = UndoResult(resumed=any(e["event"] == "undo-start" for e in events))
    try:
        _undo(q, events, pip_part, result)
    except OSError as exc:
        q.note(event="undo-failed", error=str(exc))
        raise InstallFailed(
            f"undoing clean-install {q.id} stopped: {os_cause(exc)}; every file not put back yet "
            f"is still in {q.files}",
            hint=f"fix the cause, then `lockguard restore {q.id} --prefix "
            f"{q.prefix}` finishes the undo",
        ) from None
    changed = result.displaced_in_quarantine
    if changed:
        q.note(event="undo-incomplete", changed=changed[:100])
        raise InstallFailed(
            f"{len(changed)} quarantined files changed after they were moved; they stay in "
            f"{q.files}: {', '.join(changed[:5])}",
            hint="compare them with what you expect, put them back by hand, then move the "
            "quarantine folder out of .lockguard/quarantine/",
        )
    error = q.mark(
        "restored", put_back=result.put_back, removed=result.removed, gone=len(result.gone)
    )
    result.journal_error = result.journal_error or error
    return result


def _undo(q: Quarantine, events: list[dict], pip_part: bool, result: UndoResult) -> None:
    result.journal_error = q.note(event="undo-start", sync=True)
    for leftover in q.root.glob("trash-*"):  # an earlier undo's, if its deleting process died
        delete_later(leftover)
    if pip_part:
        _remove_added(q, result)
        result.journal_error = result.journal_error or q.note(
            event="removed",
            count=result.removed,
            displaced=len(result.displaced),
            gone=len(result.gone),
            sync=True,
        )
    result.displaced_in_quarantine = _put_back(q, result)
    _recreate_folders(q, events)
    shutil.rmtree(q.shadow, ignore_errors=True)


def _must_stay_inside(q: Quarantine, events: list[dict]) -> None:
    """Every path the undo would touch is checked before it changes anything (the journal
    included): a damaged state folder naming a path through a link out of the prefix is refused
    whole, never half undone."""
    seen: dict[str, str] = {}
    stored: dict[str, str] = {}
    aside: dict[str, str] = {}
    real: set[Path] = set()
    for entry in q.manifest()["entries"]:  # a FIFO, file or link where a folder of files/ was
        _real_folders(q.files, entry["path"], real)
        _real_folders(q.root / "displaced", entry["path"], real)
    where = str(q.manifest_path)
    try:
        for entry in q.manifest()["entries"]:
            safe_relative(q.prefix, entry["path"], seen)
            # where its bytes lie, and where it would be set aside: never through a link out
            safe_relative(q.files, entry["path"], stored)
            safe_relative(q.root / "displaced", entry["path"], aside)
        where = str(q.journal_path)
        for event in events:
            if event["event"] == "rmdir":
                safe_relative(q.prefix, event["path"], seen)
    except InputError as exc:
        raise InputError(
            f"{where}: {exc.message}",
            file=where,
            hint="the quarantine folder is damaged: restore "
            "cannot trust it; move that folder out of .lockguard/quarantine/ and run again",
        ) from None


def _real_folders(root: Path, path: str, checked: set[Path]) -> None:
    """Every folder of `path` under `root` is a real folder or missing (StatePathRefused, exit 2,
    naming it, otherwise): checked before the undo moves anything."""
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):  # from the top: a FIFO above hides what is below it
        folder = root.joinpath(*parts[:depth])
        if folder not in checked:
            checked.add(folder)
            if not is_folder(folder):
                return  # missing: nothing below it either


def _ancestors(path: str):
    cut = path.rfind("/")
    while cut > 0:
        path = path[:cut]
        yield path
        cut = path.rfind("/")


def _remove_added(q: Quarantine, result: UndoResult) -> None:
    """What the run put in the prefix leaves it: a folder the run created and filled alone goes in
    one rename (torch/ is 15,000 files), other files one by one; all into a trash folder in the
    state folder, deleted in the background (freeing gigabytes takes a slow disk tens of seconds;
    the environment is whole again before that). A file changed since goes to displaced/."""
    added, created = added_by_run(q)
    files, _dirs = list_tree(str(q.prefix))
    present = set(files)
    result.gone += sorted(p for p in added if p not in present)
    # created folders that hold something that is not the run's, as the run left it
    keep: set[str] = set()
    ours: dict[str, bool] = {}
    for path in files:
        if path not in added:
            keep.update(_ancestors(path))
            continue
        signature = added[path]
        if signature is not None:
            found = stat_signature(q.prefix / path)
            if found is None:
                continue
            if found[1] != list(signature):
                ours[path] = False
                keep.update(_ancestors(path))
                continue
        ours[path] = True
    trash = q.root / f"trash-{os.getpid()}-{time.monotonic_ns()}"
    seen: dict[str, str] = {}
    gone: set[str] = set()
    for folder in sorted(set(created) - keep, key=lambda d: d.count("/")):
        if any(a in gone for a in _ancestors(folder)):
            continue
        source = safe_relative(q.prefix, folder, seen)
        if not os.path.lexists(source):
            continue  # removed since with everything in it (`rm -rf`, `pip uninstall`)
        (trash / folder).parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, trash / folder)
        gone.add(folder)
    for path, unchanged in sorted(ours.items()):
        if any(a in gone for a in _ancestors(path)):
            result.removed += 1
        elif unchanged:
            # removed meanwhile by someone else: gone either way
            with contextlib.suppress(FileNotFoundError):
                os.unlink(safe_relative(q.prefix, path, seen))
            result.removed += 1
        else:
            _aside(q, path, safe_relative(q.prefix, path, seen))
            result.displaced.append(path)
    _unshadow(q, result, seen)
    for folder in sorted(set(created) - gone, key=lambda d: -d.count("/")):
        with contextlib.suppress(OSError):  # not empty: something else lives there now; it stays
            os.rmdir(safe_relative(q.prefix, folder, seen))
    delete_later(trash)


def delete_later(folder: Path) -> None:
    """Delete a folder of the state folder in a detached, niced process (or now, if none starts)."""
    if not folder.exists():
        return
    code = "import os, shutil, sys; os.nice(10); shutil.rmtree(sys.argv[1], ignore_errors=True)"
    if not start_detached([sys.executable, "-c", code, str(folder)]):
        shutil.rmtree(folder, ignore_errors=True)


def _unshadow(q: Quarantine, result: UndoResult, seen: dict[str, str]) -> None:
    """A run killed before its shadows joined the quarantine: files pip wrote over come back from
    their hard links (pip's copies were removed above), and links it replaced are made again."""
    before = load_listing(q.before_path)["files"]
    if q.shadow.is_dir():
        for folder, _dirs, files in os.walk(q.shadow):
            for name in files:
                shadow = Path(folder) / name
                path = str(shadow.relative_to(q.shadow))
                original = safe_relative(q.prefix, path, seen)
                if not os.path.lexists(original):
                    original.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(shadow, original)
                    result.put_back += 1
    for path, signature in before.items():
        if isinstance(signature, list) and len(signature) > 3 and signature[3] is not None:
            original = safe_relative(q.prefix, path, seen)
            if not os.path.lexists(original):
                os.symlink(signature[3], original)


def _aside(q: Quarantine, path: str, full: Path) -> None:
    target = q.root / "displaced" / path
    suffix = 0
    while os.path.lexists(target):
        suffix += 1
        target = q.root / "displaced" / f"{path}.{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(full, target)


def put_back_file(stored: Path, original: Path, mode: int | None) -> None:
    """One quarantined file back to its place, with its mode (None: a symlink, no mode)."""
    move_file(stored, original)
    if mode is not None:
        os.chmod(original, mode)


def _put_back(q: Quarantine, result: UndoResult) -> list[str]:
    """Every file that lies in files/ goes back (the journal may lag a kill by one move)."""
    changed = []
    made: set[Path] = set()
    seen: dict[str, str] = {}
    for entry in reversed(q.manifest()["entries"]):
        path = entry["path"]
        stored = q.files / path
        try:
            info = os.lstat(stored)
        except FileNotFoundError:
            continue  # never moved, or already back
        size, mtime = entry.get("size"), entry.get("mtime_ns")
        if (
            entry["symlink"] is None
            and isinstance(size, int)
            and isinstance(mtime, int)
            and (info.st_size, info.st_mtime_ns) != (size, mtime)
        ):
            changed.append(path)
            continue
        original = safe_relative(q.prefix, path, seen)
        if os.path.lexists(original):
            _aside(q, path, original)
            result.displaced.append(path)
        if original.parent not in made:
            original.parent.mkdir(parents=True, exist_ok=True)
            made.add(original.parent)
        put_back_file(stored, original, entry["mode"] if entry["symlink"] is None else None)
        result.put_back += 1
        result.journal_error = result.journal_error or q.note(event="put-back", path=path)
    return changed


def _recreate_folders(q: Quarantine, events: list[dict]) -> None:
    """Folders the moves emptied and removed come back, with their modes."""
    folders = [(e["path"], e.get("mode")) for e in events if e["event"] == "rmdir"]
    for path, _mode in sorted(folders, key=lambda f: f[0].count("/")):
        safe_relative(q.prefix, path).mkdir(parents=True, exist_ok=True)
    for path, mode in sorted(folders, key=lambda f: -f[0].count("/")):
        if isinstance(mode, int):
            os.chmod(safe_relative(q.prefix, path), mode)
