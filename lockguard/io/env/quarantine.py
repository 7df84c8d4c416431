"""Quarantine: stale files move to <prefix>/.lockguard/quarantine/<id>/ (their relative paths
kept), never deleted. The manifest (path, sha256, mode, owner, reason) and a journal are written
and fsynced before the first move; every move is journaled, so an interrupted run can always be
undone: `lockguard restore` puts every byte back with its mode.

Fault injection for tests: LOCKGUARD_FAULT_AFTER_MOVES=N kills the process after N moves;
LOCKGUARD_FAULT_EACCES_AT=N makes move N fail with a permission error (root ignores chmod).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from lockguard.errors import InputError, InstallFailed

STATE_DIR = ".lockguard"
FAULT_ENV = "LOCKGUARD_FAULT_AFTER_MOVES"
FAULT_EACCES_ENV = "LOCKGUARD_FAULT_EACCES_AT"


@dataclass(frozen=True)
class QuarantineInfo:
    id: str
    state: str  # "complete", "incomplete" (interrupted), "restored", "aborted"
    count: int
    moved: int
    created: str


def quarantine_root(prefix: Path) -> Path:
    return Path(prefix) / STATE_DIR / "quarantine"


def _fsync_write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def safe_relative(prefix: Path, relative: str) -> Path:
    """The absolute path of `relative` in the prefix; refuses anything that leaves it: absolute
    paths, `..`, and parents that are symlinks out of the prefix."""
    if os.path.isabs(relative) or ".." in Path(relative).parts:
        raise InputError(f"refusing to touch {relative!r}: outside the prefix", hint="this is never done")
    root = os.path.realpath(prefix)
    full = Path(root) / relative
    parent = os.path.realpath(full.parent)
    if parent != root and not parent.startswith(root + os.sep):
        raise InputError(f"refusing to touch {relative!r}: its folder is a link out of the prefix ({parent})")
    return full


class Quarantine:
    def __init__(self, prefix: Path, qid: str) -> None:
        self.prefix = Path(os.path.realpath(prefix))
        self.id = qid
        self.root = quarantine_root(self.prefix) / qid
        self.files = self.root / "files"
        self.manifest_path = self.root / "manifest.json"
        self.journal_path = self.root / "journal.jsonl"

    # -- creating ------------------------------------------------------------------------------------

    @classmethod
    def create(cls, prefix: Path, items: list) -> Quarantine:
        """Write the manifest and the journal's first line (both fsynced) before any file moves."""
        qid = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
        q = cls(prefix, qid)
        q.files.mkdir(parents=True)
        entries = []
        for item in items:
            full = safe_relative(q.prefix, item.path)
            info = os.lstat(full)
            link = os.readlink(full) if stat.S_ISLNK(info.st_mode) else None
            entries.append({
                "path": item.path, "sha256": None if link is not None else _sha256(full),
                "mode": stat.S_IMODE(info.st_mode), "symlink": link, "owner": item.owner, "reason": item.reason,
            })
        manifest = {"id": qid, "prefix": str(q.prefix), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "entries": entries}
        _fsync_write(q.manifest_path, json.dumps(manifest, indent=2) + "\n")
        _fsync_write(q.journal_path, json.dumps({"event": "begin", "count": len(entries)}) + "\n")
        return q

    def manifest(self) -> dict:
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def _log(self, **event) -> None:
        with open(self.journal_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def journal(self) -> list[dict]:
        try:
            lines = self.journal_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                break  # a torn last line from a kill: everything before it is whole
        return out

    # -- moving --------------------------------------------------------------------------------------

    def move_all(self) -> int:
        """Move every manifest entry into the quarantine. On any error, put back what moved and
        raise InstallFailed."""
        fault = int(os.environ.get(FAULT_ENV, "0") or 0)
        eacces = int(os.environ.get(FAULT_EACCES_ENV, "0") or 0)
        moved = 0
        for entry in self.manifest()["entries"]:
            source = safe_relative(self.prefix, entry["path"])
            target = self.files / entry["path"]
            try:
                if eacces and moved + 1 == eacces:
                    raise PermissionError(13, "Permission denied", str(source))
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, target)  # same file system: the prefix holds the quarantine
                _fsync_dir(target.parent)
            except OSError as exc:
                self._log(event="error", path=entry["path"], error=str(exc))
                self.restore()
                self._log(event="aborted")
                raise InstallFailed(
                    f"cannot move {entry['path']} into quarantine: {exc.strerror or exc}; everything moved so far "
                    "was put back", hint="run as a user that owns the environment") from None
            self._log(event="moved", path=entry["path"])
            moved += 1
            if fault and moved >= fault:
                os._exit(137)  # fault injection: die mid-run as a kill would
        return moved

    def finish(self) -> None:
        self._log(event="done")

    # -- state and restore ---------------------------------------------------------------------------

    def state(self) -> str:
        events = [e["event"] for e in self.journal()]
        if "restored" in events:
            return "restored" if "aborted" not in events else "aborted"
        if "done" in events:
            return "complete"
        return "incomplete"

    def moved_paths(self) -> list[str]:
        moved, restored = [], set()
        for event in self.journal():
            if event["event"] == "moved":
                moved.append(event["path"])
            elif event["event"] == "put-back":
                restored.add(event["path"])
        return [p for p in moved if p not in restored]

    def restore(self) -> int:
        """Put every moved file back, byte for byte, with its mode. A file that was written at the
        same path meanwhile moves aside into the quarantine's displaced/ folder."""
        entries = {e["path"]: e for e in self.manifest()["entries"]}
        count = 0
        for path in reversed(self.moved_paths()):
            entry = entries[path]
            stored = self.files / path
            original = safe_relative(self.prefix, path)
            if os.path.lexists(original):
                displaced = self.root / "displaced" / path
                displaced.parent.mkdir(parents=True, exist_ok=True)
                os.rename(original, displaced)
            original.parent.mkdir(parents=True, exist_ok=True)
            if entry["sha256"] and _sha256(stored) != entry["sha256"]:
                raise InstallFailed(f"the quarantined copy of {path} changed; not restoring it",
                                    hint=f"inspect {stored}")
            os.rename(stored, original)
            if entry["symlink"] is None:
                os.chmod(original, entry["mode"])
            self._log(event="put-back", path=path)
            count += 1
        self._log(event="restored")
        return count


def list_quarantines(prefix: Path) -> list[QuarantineInfo]:
    root = quarantine_root(prefix)
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        q = Quarantine(prefix, folder.name)
        try:
            manifest = q.manifest()
        except (OSError, ValueError):
            continue
        out.append(QuarantineInfo(folder.name, q.state(), len(manifest["entries"]), len(q.moved_paths()),
                                  manifest.get("created", "")))
    return out
