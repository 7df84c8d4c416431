"""Read what `lockguard check` looks at: the lock files of an intent (pylock.toml included), and
the repository's other files that can contradict them (requirements*.txt/.in, Dockerfiles,
pyproject.toml, setup.cfg)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lockguard.check.snapshot import LockFile, Snapshot
from lockguard.errors import InputError
from lockguard.io.project.intent_file import source_of
from lockguard.io.project.project_paths import read_project_lock
from lockguard.io.project.repo_scan import repository_paths
from lockguard.io.project.written import written_copy
from lockguard.io.read import REPO_FILE_LIMIT, read_text
from lockguard.lockfiles.formats import format_of
from lockguard.lockfiles.headers import body_hash_of, read_header
from lockguard.lockfiles.syntax import LockSyntaxError
from lockguard.model.intent import Intent

# lock_file: re-used by callers
from lockguard.model.lock_paths import lock_file, lock_paths  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path


def parse_lock(kind: str, text: str, path: str):
    """The parsed view of one lock file; a file not in the form lockguard writes is an InputError
    naming the file and the line."""
    reader = format_of(kind).parse  # KeyError for a kind no format has
    try:
        return reader(text)
    except LockSyntaxError as exc:
        raise InputError(
            f"{path}" + (f":{exc.line}" if exc.line else "") + f": {exc.message}",
            file=path,
            line=exc.line,
            hint="lock files are written by lockguard: run `lockguard resolve` to "
            "write them again (and do not edit them by hand)",
        ) from None


def read_snapshot(
    intent: Intent, *, scan_repo: bool = True, exclude: set[str] | None = None
) -> Snapshot:
    """`exclude`: more lock files that are no repository file (a project's other profiles')."""
    # the folder as text: the files are opened by name (messages spell them with pathlib,
    # io/read.py), so os.path.join opens what root / relative would
    root = source_of(intent).folder
    files = []
    for relative, kind, platform in lock_paths(intent):
        text = read_project_lock(root, relative)  # never through a symlink out of the project
        header = read_header(text) if text is not None else None
        # missing, or without lockguard's header (LG104): not parsed
        if text is None or header is None or not header.intent_hash:
            files.append(LockFile(relative, text, kind, platform))
            continue
        parsed = parse_lock(kind, text, relative)
        written = None
        if header.body_hash and header.body_hash != body_hash_of(text):
            # only for a hand-edited lock: the copy lockguard wrote, to show what changed
            written = written_copy(header.body_hash)
        files.append(
            LockFile(relative, text, kind, platform, header=header, parsed=parsed, written=written)
        )
    locks = {p for p, _k, _pl in lock_paths(intent)} | (exclude or set())
    repo_files = repository_files(root, exclude=locks) if scan_repo else {}
    return Snapshot(
        intent=intent, intent_file=source_of(intent).name, files=tuple(files), repo_files=repo_files
    )


def repository_files(root: Path | str, exclude: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for relative in repository_paths(root):
        if relative in exclude:
            continue
        try:
            found[relative] = read_text(
                os.path.join(root, relative), what="file", limit=REPO_FILE_LIMIT
            )
        except (OSError, InputError):
            continue  # not a regular UTF-8 file of sane size: not one that pins anything
    return found
