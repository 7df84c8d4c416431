"""`lockguard restore`'s session: which clean-install run to undo (newest first), the undo under
the environment's lock, the runs with the disk each quarantine takes, and pruning them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lockguard import interrupts
from lockguard.errors import InputError
from lockguard.io.env.prefix_lock import locked_prefix
from lockguard.io.env.quarantine_runs import (
    RESTORABLE,
    QuarantineInfo,
    clear_trash,
    drop_run,
    list_quarantines,
    prunable,
    run_size,
)
from lockguard.io.env.transaction import Transaction, UndoResult


def held(
    prefix: Path,
    command: str,
    *,
    run: str = "",
    wait: bool,
    on_wait: Callable[[str], None],
    shown: str,
):
    """The environment's lock, exclusive, for the block (a second run waits, or is refused)."""
    return locked_prefix(
        prefix, command, exclusive=True, run=run, wait=wait, on_wait=on_wait, shown=shown
    )


def newest_restorable(prefix: Path) -> str:
    """The run a plain restore would undo as things stand ("" when none)."""
    return next((q.id for q in reversed(list_quarantines(prefix)) if q.state in RESTORABLE), "")


@dataclass(frozen=True, slots=True)
class Restored:
    id: str
    result: UndoResult
    displaced_folder: Path  # where files changed since the run were kept


def restore_run(prefix: Path, quarantine_id: str | None) -> Restored:
    """Undo the run named (default: the newest restorable one); runs are undone newest first."""
    found = list_quarantines(prefix)
    candidates = [q for q in found if q.state in RESTORABLE]
    if quarantine_id is None:
        if not candidates:
            raise InputError(
                f"nothing to restore in {prefix}", hint="`lockguard restore --list` shows the runs"
            )
        quarantine_id = candidates[-1].id
    elif quarantine_id not in {q.id for q in found}:
        raise InputError(
            f"no clean-install {quarantine_id} in {prefix}",
            hint="`lockguard restore --list` shows them",
        )
    elif quarantine_id not in {q.id for q in candidates}:
        raise InputError(f"clean-install {quarantine_id} was already undone")
    newer = [q.id for q in candidates if q.id > quarantine_id]
    if newer:
        raise InputError(
            f"clean-install {quarantine_id} is older than {', '.join(newer)}, which changed the "
            "same environment afterwards",
            hint=f"restore {newer[-1]} first (runs are undone newest first)",
        )
    run = Transaction.of(prefix, quarantine_id)
    interrupts.now(_where_restore_stands(run, prefix))
    return Restored(quarantine_id, run.undo(), run.quarantine.root / "displaced")


def _where_restore_stands(run: Transaction, prefix: Path) -> Callable[[], str]:
    """What an interrupt of this restore says, worked out when it comes from the run's state
    folder: nothing changed yet, half restored (how many quarantined files are back), or
    restored. Restoring again finishes a half restore (the undo goes by what lies in files/)."""
    q = run.quarantine
    starts_before = _undo_starts(q.journal())
    again = f"`lockguard restore {q.id} --prefix {prefix}`"

    def line() -> str:
        events = q.journal()
        if q.state(events) == "restored":
            return f"interrupted after {prefix} was restored (clean-install {q.id} is undone)"
        if _undo_starts(events) == starts_before and q.state(events) == "complete":
            return f"interrupted before anything changed in {prefix}; {again} restores it"
        back, total = q.files_back()
        return (
            f"interrupted: {prefix} is half restored ({back} of {total} files back); run "
            f"{again} again to finish"
        )

    return line


def _undo_starts(events: list[dict]) -> int:
    return sum(1 for e in events if e["event"] == "undo-start")


def runs(prefix: Path) -> list[tuple[QuarantineInfo, int]]:
    """Every run of the environment, oldest first, with the bytes its quarantine takes."""
    return [(q, run_size(prefix, q.id)) for q in list_quarantines(prefix)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Pruning:
    going: tuple[QuarantineInfo, ...]  # the runs whose quarantines go
    sizes: Mapping[str, int]  # what each frees
    stuck: tuple[str, ...]  # interrupted runs: never pruned
    kept: tuple[str, ...]


def prune_plan(prefix: Path, keep: int) -> Pruning:
    """Which runs pruning takes (all but the newest `keep` restorable ones), measured before; an
    earlier undo's leftover trash goes first. Called with the environment's lock held."""
    clear_trash(prefix)
    found = list_quarantines(prefix)
    going = prunable(found, keep)
    stuck = [r.id for r in found if r.state not in ("complete", "restored", "aborted")]
    return Pruning(
        going=tuple(going),
        sizes={r.id: run_size(prefix, r.id) for r in going},
        stuck=tuple(stuck),
        kept=tuple(r.id for r in found),
    )


def prune(prefix: Path, pruning: Pruning) -> tuple[list[str], int, list[str]]:
    """Delete those quarantines: (the runs gone, as checked after; the bytes freed; the runs
    left)."""
    interrupts.now(
        f"interrupted while pruning the quarantines of {prefix}: the runs not pruned yet are "
        f"intact; `lockguard restore --prune --prefix {prefix}` finishes it"
    )
    for r in pruning.going:
        drop_run(prefix, r.id)
    left = {r.id for r in list_quarantines(prefix)}
    gone = [r.id for r in pruning.going if r.id not in left]
    return gone, sum(pruning.sizes[i] for i in gone), sorted(left)


@dataclass(frozen=True, slots=True, kw_only=True)
class Listed:
    """`restore --list`: the runs, oldest first, with the bytes each quarantine takes."""

    prefix: Path
    runs: tuple[tuple[QuarantineInfo, int], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Pruned:
    """`restore --prune`: what the plan was, and (when it went ahead) what went."""

    prefix: Path
    pruning: Pruning
    gone: tuple[str, ...]
    freed: int
    left: tuple[str, ...]


def restore(
    *,
    quarantine_id: str | None,
    prefix: Path | None,
    list_only: bool,
    prune_runs: bool,
    keep: int,
    wait: bool,
    on_wait: Callable[[str], None],
    confirm_prune: Callable[[Path, Pruning], None],
) -> Restored | Listed | Pruned:
    """The whole of `lockguard restore`: the environment (--prefix, else the active one), then
    the list, the pruning (`confirm_prune` shows the plan and asks; it raises to stop), or the
    undo of a run, each under the environment's lock where it changes something."""
    from lockguard.app.env_check import must_be_environment

    shown = prefix or Path(os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX") or "")
    if not str(shown):
        raise InputError(
            "which environment? pass --prefix PREFIX",
            hint="e.g. lockguard restore --list --prefix .venv",
        )
    root = must_be_environment(
        shown,
        hint="restore undoes clean-installs, which run only in venvs and conda "
        "prefixes; pass the environment's folder",
    )
    if list_only:
        return Listed(prefix=root, runs=tuple(runs(root)))
    if prune_runs:
        if quarantine_id is not None:
            raise InputError(
                "--prune takes no run id", hint="--keep N keeps the newest N restorable runs"
            )
        with held(root, "restore --prune", wait=wait, on_wait=on_wait, shown=str(shown)):
            pruning = prune_plan(root, keep)
            if not pruning.going:
                return Pruned(prefix=root, pruning=pruning, gone=(), freed=0, left=pruning.kept)
            confirm_prune(root, pruning)
            gone, freed, left = prune(root, pruning)
            return Pruned(
                prefix=root, pruning=pruning, gone=tuple(gone), freed=freed, left=tuple(left)
            )
    # the lock names the run it restores: the newest restorable one as things stand (chosen again
    # once the lock is held, in case a run that was waited for changed them)
    named = quarantine_id or newest_restorable(root)
    with held(root, "restore", run=named, wait=wait, on_wait=on_wait, shown=str(shown)):
        return restore_run(root, quarantine_id)
