"""`lockguard restore`: undo a clean-install, pip's part included; list the runs; prune their
quarantines to get the disk space back."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from lockguard.app.env_check import must_be_environment
from lockguard.app.restore_session import (
    held,
    newest_restorable,
    prune,
    prune_plan,
    restore_run,
    runs,
)
from lockguard.cli.common import get_ui, json_option
from lockguard.errors import InputError
from lockguard.model.wording import counted, human_size


def _short(items: tuple[str, ...], width: int = 60) -> str:
    text = ", ".join(items)
    if len(text) <= width:
        return text or "-"
    shown: list[str] = []
    for item in items:
        if len(", ".join([*shown, item])) > width - 12:
            break
        shown.append(item)
    return ", ".join(shown) + f" +{len(items) - len(shown)} more"


@click.command()
@click.argument("quarantine_id", required=False)
@click.option(
    "--prefix",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="The environment (default: the active one, $VIRTUAL_ENV or $CONDA_PREFIX).",
)
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="List the clean-install runs of the environment, with the "
    "disk each one's quarantine takes.",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Delete the quarantines of old runs to give their disk space back: "
    "those runs can no longer be restored. Asks first (or pass --yes).",
)
@click.option(
    "--keep",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="With --prune: keep the newest N restorable runs.",
)
@click.option("--yes", "-y", is_flag=True, help="With --prune: do not ask.")
@click.option(
    "--no-wait",
    is_flag=True,
    help="Exit 2 at once when another lockguard run holds the environment, "
    "instead of waiting for it.",
)
@json_option
@click.pass_context
def restore(ctx, quarantine_id, prefix, list_only, prune, keep, yes, no_wait, as_json) -> None:
    """Undo a clean-install (default: the newest one not undone yet): remove every file it installed
    and put every quarantined file back, byte for byte and with its mode. An interrupted run, or
    an interrupted restore, is finished the same way; files the run installed that were removed
    since (`pip uninstall`) are skipped, with a note. Runs are undone newest first."""
    ui = get_ui(ctx, "restore")
    prefix = prefix or Path(os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX") or "")
    if not str(prefix):
        raise InputError(
            "which environment? pass --prefix PREFIX",
            hint="e.g. lockguard restore --list --prefix .venv",
        )
    root = must_be_environment(
        prefix,
        hint="restore undoes clean-installs, which run only in venvs and conda "
        "prefixes; pass the environment's folder",
    )
    if list_only:
        return _list(ui, root, as_json)
    if prune:
        if quarantine_id is not None:
            raise InputError(
                "--prune takes no run id", hint="--keep N keeps the newest N restorable runs"
            )
        return _prune(ui, root, prefix, keep=keep, yes=yes, wait=not no_wait, as_json=as_json)
    # the lock names the run it restores: the newest restorable one as things stand (chosen again
    # once the lock is held, in case a run that was waited for changed them)
    named = quarantine_id or newest_restorable(root)
    with held(root, "restore", run=named, wait=not no_wait, on_wait=ui.info, shown=str(prefix)):
        return _restore(ui, root, quarantine_id, as_json)


def _restore(ui, prefix: Path, quarantine_id: str | None, as_json: bool) -> None:
    restored = restore_run(prefix, quarantine_id)
    quarantine_id, result = restored.id, restored.result
    if as_json:
        ui.emit_json(
            {
                "restored": quarantine_id,
                "files": result.put_back,
                "removed": result.removed,
                "displaced": result.displaced,
                "gone": result.gone,
                "gone_packages": result.gone_packages(),
            }
        )
    ui.info(
        f"undid clean-install {quarantine_id}: removed {counted(result.removed, 'file')} it had "
        f"installed, put back {counted(result.put_back, 'file')}"
    )
    if result.gone:
        packages = result.gone_packages()
        why = (
            "removed by the interrupted restore, or since by `pip uninstall` or by hand"
            if result.resumed
            else "removed since, by `pip uninstall` or by hand"
        )
        ui.info(
            (
                f"note: {counted(len(result.gone), 'file')} the run had installed were already "
                f"gone ({why})"
            )
            + (f": {', '.join(packages)}" if packages else "")
            + "; skipped"
        )
    if result.displaced:
        ui.warn(
            f"{counted(len(result.displaced), 'file')} changed after the run were kept in "
            f"{restored.displaced_folder}: {', '.join(result.displaced[:5])}"
        )
    if result.journal_error:
        ui.warn(
            "the run's journal could not record every step of the restore "
            f"({result.journal_error}); the environment is restored all the same"
        )


def _list(ui, prefix: Path, as_json: bool) -> None:
    listed = runs(prefix)
    found = [q for q, _size in listed]
    sizes = {q.id: size for q, size in listed}
    if as_json:
        ui.emit_json([{**q.to_dict(), "bytes": sizes[q.id]} for q in found])
    elif not found:
        ui.out(f"no clean-install runs in {prefix}")
    else:
        ui.table(
            ["id", "state", "created", "quarantined", "size", "removed", "installed"],
            [
                (
                    q.id,
                    q.state,
                    q.created,
                    q.count,
                    human_size(sizes[q.id]),
                    _short(q.removed),
                    _short(q.installed),
                )
                for q in found
            ],
        )
        ui.info(
            f"the quarantines take {human_size(sum(sizes.values()))} in "
            f"{prefix / '.lockguard' / 'quarantine'}; `lockguard restore --prune` gives it back"
        )


def _prune(
    ui, prefix: Path, shown: Path, *, keep: int, yes: bool, wait: bool, as_json: bool
) -> None:
    """Which runs go (with what each frees), a question (or --yes), then the deletion, under the
    prefix's lock. The freed bytes are measured before the deletion, which is checked after."""
    with held(prefix, "restore --prune", wait=wait, on_wait=ui.info, shown=str(shown)):
        pruning = prune_plan(prefix, keep)
        going, sizes, stuck = pruning.going, pruning.sizes, pruning.stuck
        if not going:
            if as_json:
                ui.emit_json({"pruned": [], "freed_bytes": 0, "kept": pruning.kept})
            else:
                ui.info(
                    f"nothing to prune in {prefix}"
                    + (
                        f" (kept: {', '.join(stuck)}: interrupted runs are "
                        "never pruned; `lockguard restore` finishes them)"
                        if stuck
                        else ""
                    )
                )
            return
        total = sum(sizes.values())
        if not as_json:
            ui.info(
                f"pruning deletes the quarantines of {counted(len(going), 'run')}, "
                f"{human_size(total)}:"
            )
            for r in going:
                after = (
                    "can no longer be restored" if r.state == "complete" else f"already {r.state}"
                )
                ui.info(
                    f"  {r.id}  {human_size(sizes[r.id])}  {after}"
                    + (
                        f" (it took out {_short(r.removed)})"
                        if r.state == "complete" and r.removed
                        else ""
                    )
                )
        if not yes:
            if not sys.stdin.isatty():
                raise InputError(
                    "restore --prune deletes quarantined files and stdin is not a terminal",
                    hint="review the list above, then pass --yes",
                )
            click.confirm("delete them?", abort=True, err=True)
        gone, freed, left = prune(prefix, pruning)
        if as_json:
            ui.emit_json({"pruned": gone, "freed_bytes": freed, "kept": left})
        else:
            ui.info(f"pruned {counted(len(gone), 'run')}, freed {human_size(freed)}")
