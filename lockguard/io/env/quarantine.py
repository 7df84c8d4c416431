"""A clean-install transaction, kept in <prefix>/.lockguard/quarantine/<id>/: files that leave the
prefix move into files/ (their relative paths kept), never deleted. The manifest (path, sha256,
mode, owner, reason; the outgoing and incoming distributions) and a journal are written and fsynced
before the first move; every move, every folder removed and every phase is journaled, so a run
killed at any point can be undone: `lockguard restore` removes what the run installed and puts
every byte back with its mode (transaction.py).

Phases in the journal: begin, moved*, rmdir*, quarantined, apply-start (before.json lists the tree
pip starts from; shadow/ holds a hard link of each of its files), pip-start, [added, moved*: files
pip wrote over], installed (installed.json lists what the run added or replaced), verified, done;
an undo logs undo-start, removed, put-back*, restored [, aborted]. An undo is journaled like the
run: one killed half-way (a restore interrupted during its put-backs) leaves the run
"restore-interrupted", never "complete", and the next restore or clean-install finishes it.

Every file operation that tests make fail or stop goes through a small named function here
(move_file, and undo.put_back_file), which the tests' fault seam wraps from outside
(tests/support/fault_plugin/): production code holds no fault switches.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

from lockguard.errors import InputError, InstallFailed
from lockguard.io.env.file_listing import STATE_DIR
from lockguard.io.env.prefix_paths import os_cause, path_problem, safe_relative, sha256_of
from lockguard.io.read import MIB, read_env_bytes
from lockguard.io.state_paths import open_file
from lockguard.io.write import sync_folder, write_atomic

_STATE_LIMIT = 512 * MIB  # manifests of a CUDA environment are a few MB


def new_run_id() -> str:
    """A run's id, sortable by time: 20261201-120304-123456-a3 (the prefix lock names it too)."""
    now = time.time()
    return (
        time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        + f"-{int(now % 1 * 1e6):06d}-{secrets.token_hex(1)}"
    )


def move_file(source: Path, target: Path) -> None:
    """One move into or out of the quarantine: a rename, the prefix holding the quarantine."""
    os.rename(source, target)


def quarantine_root(prefix: Path) -> Path:
    return Path(prefix) / STATE_DIR / "quarantine"


_ENTRY_TYPES = {"path": str, "mode": int, "owner": str, "reason": str}


class MoveFailed(Exception):
    """A file could not move into the quarantine: `path` (relative), and the OSError."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path, error)
        self.path = path
        self.error = error


class Quarantine:
    def __init__(self, prefix: Path, qid: str) -> None:
        self.prefix = Path(os.path.realpath(prefix))
        self.id = qid
        self.root = quarantine_root(self.prefix) / qid
        self.files = self.root / "files"
        self.shadow = self.root / "shadow"
        self.manifest_path = self.root / "manifest.json"
        self.journal_path = self.root / "journal.jsonl"
        self.before_path = self.root / "before.json"
        self.installed_path = self.root / "installed.json"
        self._manifest: dict | None = None
        self._journal: int | None = None  # the journal, opened for appending on the first event

    # -- creating ----------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        prefix: Path,
        items: list,
        *,
        outgoing: list[dict] | None = None,
        install: list[str] | None = None,
        anchors: set[str] | None = None,
        qid: str | None = None,
        on_hashed: Callable[[int, int], None] | None = None,
    ) -> Quarantine:
        """Hash every file that will move, then write the manifest and the journal's first line
        (both fsynced) before any file moves. A file that cannot be read stops the run before the
        quarantine folder exists; a state folder that cannot be written (a full disk) is removed
        again: either way nothing changed (InstallFailed). `anchors`: folders (relative) never
        removed when a move empties them; `on_hashed(files, bytes)` follows the hashing."""
        q = cls(prefix, qid or new_run_id())
        entries = q._entries(items, on_hashed)
        manifest = {
            "id": q.id,
            "prefix": str(q.prefix),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "entries": entries,
            "outgoing": outgoing or [],
            "install": install or [],
            "anchors": sorted(anchors or ()),
        }
        try:
            q.files.mkdir(parents=True)
            write_atomic(q.manifest_path, json.dumps(manifest, indent=1) + "\n")
            write_atomic(
                q.journal_path, json.dumps({"event": "begin", "count": len(entries)}) + "\n"
            )
        except OSError as exc:
            shutil.rmtree(q.root, ignore_errors=True)  # nothing has moved: the run never started
            raise InstallFailed(
                f"cannot write the quarantine manifest in {q.root.parent}: {os_cause(exc)}; "
                "nothing was changed",
                hint=_SPACE_HINT if exc.errno == 28 else None,
            ) from None
        q._manifest = manifest
        return q

    def _entries(
        self, items: list, on_hashed: Callable[[int, int], None] | None = None
    ) -> list[dict]:
        entries = []
        seen: dict[str, str] = {}
        total = 0
        for item in items:
            full = safe_relative(self.prefix, item.path, seen)
            try:
                info = os.lstat(full)
            except FileNotFoundError:
                continue  # gone since the scan: nothing to move
            if stat.S_ISDIR(info.st_mode):
                continue  # a RECORD that names a folder: files move, folders never do
            link = os.readlink(full) if stat.S_ISLNK(info.st_mode) else None
            try:
                digest = None if link is not None else sha256_of(full)
            except OSError as exc:
                raise InstallFailed(
                    f"cannot read {full} to record it in the quarantine manifest: {os_cause(exc)}; "
                    "nothing was changed",
                    hint=_MOVE_HINT,
                ) from None
            entries.append(
                {
                    "path": item.path,
                    "sha256": digest,
                    "mode": stat.S_IMODE(info.st_mode),
                    "symlink": link,
                    "owner": item.owner,
                    "reason": item.reason,
                    "size": info.st_size,
                    "mtime_ns": info.st_mtime_ns,  # a rename keeps both: restore's cheap check
                }
            )
            total += info.st_size
            if on_hashed is not None:
                on_hashed(len(entries), total)
        return entries

    def adopt(self, items: list[tuple[str, Path, str, str]]) -> None:
        """Files whose old bytes lie elsewhere in the state folder (the hard link that kept a file
        pip wrote over) join the quarantine: (path, where its bytes are, owner, reason). Manifest
        first, then the moves, as always."""
        if not items:
            return
        entries = []
        for path, source, owner, reason in items:
            safe_relative(self.prefix, path)
            info = os.lstat(source)
            entries.append(
                {
                    "path": path,
                    "sha256": sha256_of(source),
                    "mode": stat.S_IMODE(info.st_mode),
                    "symlink": None,
                    "owner": owner,
                    "reason": reason,
                    "size": info.st_size,
                    "mtime_ns": info.st_mtime_ns,
                }
            )
        manifest = self.manifest()
        manifest["entries"] = manifest["entries"] + entries
        write_atomic(self.manifest_path, json.dumps(manifest, indent=1) + "\n")
        self._manifest = manifest
        self.log(event="added", count=len(entries))
        for path, source, _owner, _reason in items:
            target = self.files / path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, target)
            self.log(event="moved", path=path, sync=False)

    # -- reading (nothing here is trusted: a damaged state folder is bad input naming the file) ----

    def manifest(self) -> dict:
        if self._manifest is None:
            self._manifest = self._read_manifest()
        return self._manifest

    def _read_manifest(self) -> dict:
        where = str(self.manifest_path)
        try:
            data = json.loads(_read_utf8(self.manifest_path))
        except (ValueError, RecursionError) as exc:
            raise InputError(
                f"{where} is not valid JSON ({_short(exc)})", file=where, hint=_DAMAGED
            ) from None
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise InputError(
                f"{where} is not a lockguard quarantine manifest (no list of entries)",
                file=where,
                hint=_DAMAGED,
            )
        for number, entry in enumerate(entries, start=1):
            bad = not isinstance(entry, dict) or any(
                not isinstance(entry.get(k), t) for k, t in _ENTRY_TYPES.items()
            )
            if bad or not all(
                entry.get(k) is None or isinstance(entry[k], str) for k in ("sha256", "symlink")
            ):
                raise InputError(
                    f"{where}: entry {number} is not a quarantined file "
                    "(path, sha256, mode, symlink, owner, reason)",
                    file=where,
                    hint=_DAMAGED,
                )
            problem = path_problem(entry["path"]) or (
                None if 0 <= entry["mode"] <= 0o7777 else "a mode out of range"
            )
            if problem:
                raise InputError(
                    f"{where}: entry {number} ({_short(entry['path'])}): {problem}",
                    file=where,
                    hint=_DAMAGED,
                )
        for key in ("outgoing", "install", "anchors"):
            if not isinstance(data.get(key, []), list):
                raise InputError(f"{where}: {key} is not a list", file=where, hint=_DAMAGED)
        return data

    def journal(self) -> list[dict]:
        where = str(self.journal_path)
        try:
            lines = _read_utf8(self.journal_path).splitlines()
        except InputError:
            if not self.journal_path.exists():
                return []
            raise
        out = []
        for number, line in enumerate(lines, start=1):
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                if number == len(lines):
                    break  # a torn last line from a kill: everything before it is whole
                raise InputError(
                    f"{where}:{number} is not a journal event (invalid JSON)",
                    file=where,
                    line=number,
                    hint=_DAMAGED,
                ) from None
            if (
                not isinstance(event, dict)
                or not isinstance(event.get("event"), str)
                or (
                    event["event"] in ("moved", "put-back", "rmdir")
                    and not isinstance(event.get("path"), str)
                )
            ):
                raise InputError(
                    f"{where}:{number} is not a journal event",
                    file=where,
                    line=number,
                    hint=_DAMAGED,
                )
            if event["event"] in ("moved", "put-back", "rmdir") and path_problem(event["path"]):
                raise InputError(
                    f"{where}:{number}: {_short(event['path'])}: {path_problem(event['path'])}",
                    file=where,
                    line=number,
                    hint=_DAMAGED,
                )
            out.append(event)
        return out

    def log(self, *, sync: bool = True, **event) -> None:
        """Append an event. Per-file events are flushed to the kernel (a killed process loses
        nothing) but fsynced only with the next phase event: an fsync per file would cost minutes
        for a CUDA environment, and undo goes by what lies in files/, not by the journal alone."""
        data = (json.dumps(event) + "\n").encode("utf-8")
        if self._journal is None:
            self._journal = open_file(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        size = os.fstat(self._journal).st_size
        try:
            # one write per event: on a full disk it may land in part, and a part line in the middle
            # of the journal would make every later reading refuse it; so it is cut off again
            if os.write(self._journal, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.journal_path))
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._journal, size)
            raise
        if sync:
            os.fsync(self._journal)

    def note(self, **event) -> str:
        """log() for an undo, which must go on when the journal cannot be written (a full disk):
        it goes by what lies in files/, not by the journal. The error's text, or ""."""
        try:
            self.log(sync=event.pop("sync", False), **event)
        except OSError as exc:
            if self._journal is not None:
                with contextlib.suppress(OSError):
                    os.close(self._journal)
                self._journal = None
            return os_cause(exc)
        return ""

    def mark(self, event: str, **fields) -> str:
        """The event an undo ends with (restored, aborted), recorded even on a full disk: as a
        journal line when one can be written, else as an empty marker file NAME.mark (an inode
        and a name, no data block), which state() reads too. The journal's error, or ""."""
        error = self.note(event=event, sync=True, **fields)
        if error:
            try:
                os.close(open_file(self.root / f"{event}.mark", os.O_CREAT | os.O_WRONLY))
                sync_folder(self.root, strict=True)
            except OSError as exc:
                return f"{error}; no marker file either ({os_cause(exc)})"
        return error

    def close(self) -> None:
        if self._journal is not None:
            os.close(self._journal)
            self._journal = None

    # -- moving ------------------------------------------------------------------------------------

    def move_all(self) -> int:
        """Move every manifest entry not moved yet into the quarantine, then remove the folders
        the moves emptied. A move that fails stops it (MoveFailed): the transaction that owns this
        quarantine undoes what was moved (transaction.py)."""
        done = {e["path"] for e in self.journal() if e["event"] == "moved"}
        moved = len(done)
        parents: set[str] = set()
        made: set[Path] = set()
        seen: dict[str, str] = {}
        for entry in self.manifest()["entries"]:
            if entry["path"] in done:
                continue
            source = safe_relative(self.prefix, entry["path"], seen)
            target = self.files / entry["path"]
            try:
                if target.parent not in made:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    made.add(target.parent)
                move_file(source, target)  # same file system: the prefix holds the quarantine
                self.log(event="moved", path=entry["path"], sync=False)
            except OSError as exc:
                self.note(event="error", path=entry["path"], error=str(exc))
                raise MoveFailed(entry["path"], exc) from None
            done.add(entry["path"])
            parents.add(os.path.dirname(entry["path"]))
            moved += 1
        self._remove_emptied(parents)
        self.log(event="quarantined")
        return moved

    def _remove_emptied(self, parents: set[str]) -> None:
        """Folders the moves left empty go too (an empty package folder still imports as a
        namespace package); each is journaled with its mode, and restore recreates it."""
        anchors = set(self.manifest().get("anchors", ()))
        for folder in sorted(parents, key=lambda p: -p.count("/")):
            while folder and folder not in anchors and "/" in folder:
                full = self.prefix / folder
                try:
                    with os.scandir(full) as listing:
                        if next(listing, None) is not None:
                            break  # not empty: its parents are not either
                    mode = stat.S_IMODE(os.lstat(full).st_mode)
                    # before: a kill loses no mode
                    self.log(event="rmdir", path=folder, mode=mode, sync=False)
                    os.rmdir(full)
                except OSError:
                    break
                folder = os.path.dirname(folder)

    # -- state -------------------------------------------------------------------------------------

    def state(self, events: list[dict] | None = None) -> str:
        """complete, incomplete (the run was interrupted), restored, aborted (rolled back), or
        restore-interrupted (an undo of a complete run was): decided by the last undo, if any."""
        names = [e["event"] for e in (self.journal() if events is None else events)]
        names += [
            m for m in ("restored", "aborted") if (self.root / f"{m}.mark").exists()
        ]  # see mark()
        last_undo = max((i for i, n in enumerate(names) if n == "undo-start"), default=-1)
        if last_undo >= 0 and "restored" in names[last_undo:]:
            return "aborted" if "aborted" in names[last_undo:] else "restored"
        if "done" in names:
            return "restore-interrupted" if last_undo > names.index("done") else "complete"
        return "incomplete"

    def moved_paths(self, events: list[dict] | None = None) -> list[str]:
        moved, restored = [], set()
        for event in self.journal() if events is None else events:
            if event["event"] == "moved":
                moved.append(event["path"])
            elif event["event"] == "put-back":
                restored.add(event["path"])
        return [p for p in moved if p not in restored]

    def files_back(self) -> tuple[int, int]:
        """(how many of the manifest's files are out of files/: never moved or put back, all of
        them): how far an undo got."""
        entries = self.manifest()["entries"]
        waiting = sum(1 for e in entries if os.path.lexists(self.files / e["path"]))
        return len(entries) - waiting, len(entries)

    def finish(self) -> None:
        self.log(event="done")


def _read_utf8(path: Path) -> str:
    """lockguard writes its state as UTF-8 JSON: bytes that are not UTF-8 are damage, not text."""
    data = read_env_bytes(path, _STATE_LIMIT, missing_ok=False)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path} is not UTF-8 text (byte {exc.start})", file=str(path), hint=_DAMAGED
        ) from None


def _short(value: object, width: int = 120) -> str:
    text = repr(value) if not isinstance(value, BaseException) else str(value)
    return text if len(text) <= width else text[:width] + "..."


_MOVE_HINT = "run as a user that owns the environment and can read every file in it"
_SPACE_HINT = "free some space on the environment's file system and run again"
_DAMAGED = (
    "the quarantine folder is damaged: restore cannot trust it; move that folder out of "
    ".lockguard/quarantine/ (keep it: it holds the moved files) and run again"
)
