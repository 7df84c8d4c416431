"""A clean-install's transaction: it owns the quarantine (quarantine.py: the manifest, the journal,
the moved files), the pip phase and undoing all of it.

Before pip (and conda) run, before.json lists every file and folder of the prefix (size, mtime,
inode; a link's target), and each file gets a hard link in shadow/. pip replaces a file by
unlinking it and writing a new one, so a shadow keeps the old bytes of anything pip writes over
(after the quarantine moved every outgoing file away, that is only what a staying distribution
shares with an incoming one, such as nvidia/__init__.py). After pip, installed.json lists what the
run added or replaced, the shadows of replaced files move into the quarantine (manifest first),
and the other shadows go.

Undo removes what the run installed (a file changed since moves aside into displaced/), brings
shadowed files back, removes the folders the run created, and puts every quarantined file back
with its mode, with the folders the moves emptied. A run killed during pip has no installed.json:
whatever is not in before.json, or has another inode than it says, is pip's.

What the run installed and the user removed since (`pip uninstall`, `rm -rf`) is skipped and
counted (`gone`): the quarantine still goes back. Undo is idempotent: a restore that is itself
interrupted is finished by the next one. Its journal lines are written when they can be: on a
full disk the undo goes on (it goes by what lies in files/), and says that its journal lags."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.errors import InputError, InstallFailed
from lockguard.io.env.file_listing import list_tree
from lockguard.io.env.quarantine import (
    MoveFailed,
    Quarantine,
    move_file,
    os_cause,
    safe_relative,
)
from lockguard.io.read import MIB, read_env_text
from lockguard.io.run import start_detached
from lockguard.io.state_paths import is_folder
from lockguard.io.write import write_atomic
from lockguard.model.names import canonical_name

_LISTING_LIMIT = 1024 * MIB


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


def _signature(info: os.stat_result, link: str | None = None) -> list:
    return [info.st_size, info.st_mtime_ns, info.st_ino, link]


def _stat(full: Path) -> tuple[os.stat_result, list] | None:
    """lstat of `full` and its signature (a link's with its target); None when it is gone."""
    try:
        info = os.lstat(full)
    except OSError:
        return None
    return info, _signature(info, os.readlink(full) if stat.S_ISLNK(info.st_mode) else None)


def _pip_part_pending(q: Quarantine, events: list[dict]) -> bool:
    """The run got to pip (before.json exists) and no undo has removed what it installed yet."""
    names = {e["event"] for e in events}
    return "apply-start" in names and "removed" not in names and q.before_path.exists()


def record_before(q: Quarantine) -> None:
    """What pip starts from, and a hard link of every file, written before it runs."""
    files, dirs = list_tree(str(q.prefix))
    signatures: dict[str, list] = {}
    made: set[Path] = set()
    for path in files:
        full = q.prefix / path
        found = _stat(full)
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


def _load(path: Path) -> dict:
    try:
        data = json.loads(read_env_text(path, _LISTING_LIMIT, missing_ok=False))
    except (ValueError, RecursionError):
        data = None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("files"), dict)
        or not isinstance(data.get("dirs"), list)
    ):
        raise InputError(
            f"{path} is not a lockguard file listing",
            file=str(path),
            hint="the quarantine folder is damaged; "
            "move it out of .lockguard/quarantine/ and run again",
        )
    return data


def _changes(
    q: Quarantine, before: dict
) -> tuple[dict[str, list], list[str], list[str], list[str]]:
    """(signatures of what the run added or replaced, the replaced ones, files changed in place,
    folders it created), from the tree as it is against before.json."""
    files, dirs = list_tree(str(q.prefix))
    old = before["files"]
    out: dict[str, list] = {}
    replaced, modified = [], []
    for path in files:
        found = _stat(q.prefix / path)
        if found is None:
            continue
        now = found[1]
        was = old.get(path)
        if was is None:
            out[path] = now
        elif was[2] != now[2] or was[3] != now[3]:
            out[path] = now
            replaced.append(path)
        elif was[:2] != now[:2]:
            modified.append(path)
    known = set(before["dirs"])
    return out, replaced, modified, [d for d in dirs if d not in known]


def record_installed(q: Quarantine, owners: dict[str, str]) -> Installed:
    """After pip: the shadows of files pip wrote over join the quarantine, installed.json lists
    everything the run put in the prefix, and the shadow folder goes."""
    added, replaced, modified, created = _changes(q, _load(q.before_path))
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
    remove = len(_added(q)[0]) if _pip_part_pending(q, events) else 0
    back = sum(1 for e in q.manifest()["entries"] if os.path.lexists(q.files / e["path"]))
    return {
        "id": q.id,
        "phase": events[-1]["event"] if events else "",
        "remove": remove,
        "put_back": back,
    }


def _added(q: Quarantine) -> tuple[dict[str, list | None], list[str]]:
    """(files the run added or replaced, with their signatures when installed.json has them;
    folders it created)."""
    if q.installed_path.exists():
        done = _load(q.installed_path)
        return dict(done["files"]), list(done["dirs"])
    added, _replaced, _modified, created = _changes(q, _load(q.before_path))
    return dict.fromkeys(added), created


def undo(q: Quarantine) -> UndoResult:
    """Remove what the run installed and put the quarantine back. A file operation that fails
    stops it (InstallFailed, naming the cause): what is not back yet stays in the quarantine, and
    the next restore finishes the work."""
    events = q.journal()
    pip_part = _pip_part_pending(q, events)
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
    added, created = _added(q)
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
            found = _stat(q.prefix / path)
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
    before = _load(q.before_path)["files"]
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
