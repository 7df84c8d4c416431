"""An environment's state folder, <prefix>/.lockguard/, as lockguard lays it out, and the check
that it holds nothing else where lockguard goes (io/state_paths.py says why): every command that
reads or changes it runs the check first, before anything moves.

    .lockguard/                 a real folder
      lock                      the kernel lock and its holder's note (io/env/prefix_lock.py)
      trash/                    runs a prune is deleting (quarantine_runs.py)
      quarantine/               a real folder
        <run id>/               one clean-install (quarantine.py, transaction.py)
          manifest.json journal.jsonl before.json installed.json install.txt links.html
          restored.mark aborted.mark
          files/ shadow/ displaced/ trash-*/

What lies under files/, shadow/ and displaced/ is the environment's own (a quarantined symlink
stays a symlink); the undo checks that none of their folders leads out (transaction.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from lockguard.io.env.file_listing import STATE_DIR
from lockguard.io.state_paths import found_at, is_file, is_folder, refuse

LOCK_FILE = "lock"
RUN_FILES = (
    "manifest.json",
    "journal.jsonl",
    "before.json",
    "installed.json",
    "install.txt",
    "links.html",
    "restored.mark",
    "aborted.mark",
)
RUN_FOLDERS = ("files", "shadow", "displaced")


def state_folder(prefix: Path) -> Path:
    return Path(prefix) / STATE_DIR


def check_state(prefix: Path) -> None:
    """Refuse (exit 2, naming the path and what lies there) any path of the state folder that is
    not what lockguard makes there: a symlink, a FIFO, a folder for a file, a file for a folder.
    A missing path is fine: lockguard makes it when it needs it. A state folder this user may not
    look into (another user's environment) is left to the open that follows, which says so."""
    try:
        _check(state_folder(prefix))
    except PermissionError:
        return


def _check(state: Path) -> None:
    if not is_folder(state):
        return
    is_file(state / LOCK_FILE)
    is_folder(state / "trash")
    quarantine = state / "quarantine"
    if not is_folder(quarantine):
        return
    with os.scandir(quarantine) as entries:
        runs = sorted(entry.name for entry in entries)
    for name in runs:
        run = quarantine / name
        found = found_at(run)
        if found is None or found == "a regular file":
            continue  # gone meanwhile, or not a run (lockguard never reads it)
        if found != "a folder":
            raise refuse(run, "a folder (a clean-install run)", found)
        for file in RUN_FILES:
            is_file(run / file)
        for folder in RUN_FOLDERS:
            is_folder(run / folder)
        with os.scandir(run) as entries:
            for entry in entries:
                if entry.name.startswith("trash-"):
                    is_folder(run / entry.name)
