"""The pip phase of a transaction and undoing all of it.

Before pip (and conda) run, before.json lists every file (size, mtime) and folder of the prefix:
after the quarantine moved the outgoing and colliding files away, every path pip writes is new.
After pip, installed.json lists what the run added. Undo then removes exactly that (a file changed
since it was installed moves aside into displaced/ instead), removes the folders the run created,
and puts every quarantined file back with its mode, and the folders the moves emptied. A run killed
during pip has no installed.json: what is in the prefix and not in before.json is pip's.

Undo is idempotent: a restore that is itself interrupted is finished by the next one."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.errors import InstallFailed
from lockguard.io.env.bounded import MIB, read_text
from lockguard.io.env.file_listing import list_tree
from lockguard.io.env.quarantine import Quarantine, fsync_write, safe_relative

_LISTING_LIMIT = 1024 * MIB


@dataclass
class UndoResult:
    removed: int = 0  # files the run had installed, removed
    put_back: int = 0  # quarantined files put back
    displaced: list[str] = field(default_factory=list)  # changed since: moved aside, not deleted


def _signatures(prefix: Path, files: list[str]) -> dict[str, list[int]]:
    out = {}
    for path in files:
        try:
            info = os.lstat(prefix / path)
        except OSError:
            continue
        out[path] = [info.st_size, info.st_mtime_ns]
    return out


def record_before(q: Quarantine) -> None:
    """What pip starts from, written (fsynced) before it runs; then the journal says so."""
    files, dirs = list_tree(str(q.prefix))
    fsync_write(q.before_path, json.dumps({"files": _signatures(q.prefix, files), "dirs": dirs}) + "\n")
    q.log(event="apply-start")


def _load(path: Path) -> dict:
    try:
        data = json.loads(read_text(path, _LISTING_LIMIT, missing_ok=False))
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict) or not isinstance(data.get("dirs"), list):
        from lockguard.errors import InputError

        raise InputError(f"{path} is not a lockguard file listing", file=str(path),
                         hint="the quarantine folder is damaged; move it out of .lockguard/quarantine/ and run again")
    return data


def record_installed(q: Quarantine) -> list[str]:
    """After pip: installed.json lists every file and folder the run added. Returns the files that
    existed before and changed (none, unless something other than the planned pip run wrote)."""
    before = _load(q.before_path)
    files, dirs = list_tree(str(q.prefix))
    old = before["files"]
    added = [p for p in files if p not in old]
    overwritten = [p for p, sig in _signatures(q.prefix, [p for p in files if p in old]).items() if sig != old[p]]
    known = set(before["dirs"])
    fsync_write(q.installed_path, json.dumps({"files": _signatures(q.prefix, added),
                                              "dirs": [d for d in dirs if d not in known],
                                              "overwritten": overwritten}) + "\n")
    q.log(event="installed", count=len(added))
    return overwritten


def preview(q: Quarantine) -> dict:
    """What undo would do, changing nothing (for --dry-run): files to remove, files to put back."""
    events = q.journal()
    names = {e["event"] for e in events}
    remove = 0
    if "apply-start" in names and "removed" not in names:
        remove = len(_added(q))
    back = sum(1 for e in q.manifest()["entries"] if os.path.lexists(q.files / e["path"]))
    return {"id": q.id, "phase": events[-1]["event"] if events else "", "remove": remove, "put_back": back}


def _added(q: Quarantine) -> dict[str, list[int] | None]:
    """Files the run added: installed.json's, or (killed during pip) whatever before.json lacks."""
    if q.installed_path.exists():
        return dict(_load(q.installed_path)["files"])
    if not q.before_path.exists():
        return {}  # killed before the listing was whole: pip never started
    old = _load(q.before_path)["files"]
    files, _dirs = list_tree(str(q.prefix))
    return {p: None for p in files if p not in old}


def undo(q: Quarantine) -> UndoResult:
    events = q.journal()
    names = {e["event"] for e in events}
    result = UndoResult()
    q.log(event="undo-start")
    if "apply-start" in names and "removed" not in names:
        _remove_added(q, result)
        q.log(event="removed", count=result.removed, displaced=len(result.displaced))
    changed = _put_back(q, result)
    _recreate_folders(q, events)
    if changed:
        q.log(event="undo-incomplete", changed=changed[:100])
        raise InstallFailed(f"{len(changed)} quarantined files changed after they were moved; they stay in "
                            f"{q.files}: {', '.join(changed[:5])}",
                            hint="compare them with what you expect, put them back by hand, then move the "
                                 "quarantine folder out of .lockguard/quarantine/")
    q.log(event="restored", put_back=result.put_back, removed=result.removed)
    q.drop_wheels()
    return result


def _remove_added(q: Quarantine, result: UndoResult) -> None:
    added = _added(q)
    seen: dict[str, str] = {}
    for path, signature in sorted(added.items()):
        full = safe_relative(q.prefix, path, seen)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            continue
        if signature is None or [info.st_size, info.st_mtime_ns] == list(signature):
            os.unlink(full)
            result.removed += 1
        else:
            _aside(q, path, full)
            result.displaced.append(path)
    if q.installed_path.exists():
        created = _load(q.installed_path)["dirs"]
    else:
        known = set(_load(q.before_path)["dirs"])
        created = [d for d in list_tree(str(q.prefix))[1] if d not in known]
    for folder in sorted(created, key=lambda d: -d.count("/")):
        with contextlib.suppress(OSError):  # not empty: something else lives there now; it stays
            os.rmdir(safe_relative(q.prefix, folder))


def _aside(q: Quarantine, path: str, full: Path) -> None:
    target = q.root / "displaced" / path
    suffix = 0
    while os.path.lexists(target):
        suffix += 1
        target = q.root / "displaced" / f"{path}.{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(full, target)


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
        if entry["symlink"] is None and isinstance(size, int) and isinstance(mtime, int) and \
                (info.st_size, info.st_mtime_ns) != (size, mtime):
            changed.append(path)
            continue
        original = safe_relative(q.prefix, path, seen)
        if os.path.lexists(original):
            _aside(q, path, original)
            result.displaced.append(path)
        if original.parent not in made:
            original.parent.mkdir(parents=True, exist_ok=True)
            made.add(original.parent)
        os.rename(stored, original)
        if entry["symlink"] is None:
            os.chmod(original, entry["mode"])
        q.log(event="put-back", path=path, sync=False)
        result.put_back += 1
    return changed


def _recreate_folders(q: Quarantine, events: list[dict]) -> None:
    """Folders the moves emptied and removed come back, with their modes."""
    folders = [(e["path"], e.get("mode")) for e in events if e["event"] == "rmdir"]
    for path, _mode in sorted(folders, key=lambda f: f[0].count("/")):
        safe_relative(q.prefix, path).mkdir(parents=True, exist_ok=True)
    for path, mode in sorted(folders, key=lambda f: -f[0].count("/")):
        if isinstance(mode, int):
            os.chmod(safe_relative(q.prefix, path), mode)
