"""`lockguard restore`: undo a clean-install, pip's part included; list the runs; prune their
quarantines to get the disk space back."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.app import restore_session
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
    outcome = restore_session.restore(
        quarantine_id=quarantine_id,
        prefix=prefix,
        list_only=list_only,
        prune_runs=prune,
        keep=keep,
        wait=not no_wait,
        on_wait=ui.info,
        confirm_prune=lambda root, pruning: _confirm_prune(ui, root, pruning, yes, as_json),
    )
    if isinstance(outcome, restore_session.Listed):
        _list(ui, outcome, as_json)
    elif isinstance(outcome, restore_session.Pruned):
        _pruned(ui, outcome, as_json)
    else:
        _restored(ui, outcome, as_json)


def _restored(ui, restored: restore_session.Restored, as_json: bool) -> None:
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


def _list(ui, listed: restore_session.Listed, as_json: bool) -> None:
    prefix = listed.prefix
    found = [q for q, _size in listed.runs]
    sizes = {q.id: size for q, size in listed.runs}
    if as_json:
        ui.emit_json([{**q.to_dict(), "bytes": sizes[q.id]} for q in found])
    elif not found:
        ui.out(f"no clean-install runs in {prefix}")
    else:
        undone = ("restored", "aborted")  # nothing of theirs is quarantined, removed or installed
        ui.table(
            ["id", "state", "created", "quarantined", "size", "removed", "installed"],
            [
                (
                    q.id,
                    q.state,
                    q.created,
                    q.moved,  # files in the quarantine now (none once a run is undone)
                    human_size(sizes[q.id]),
                    "" if q.state in undone else _short(q.removed),
                    "" if q.state in undone else _short(q.installed),
                )
                for q in found
            ],
        )
        stuck = [q.id for q in found if q.state in ("incomplete", "restore-interrupted")]
        freeable = sum(s for q, s in listed.runs if q.state in ("complete", "restored", "aborted"))
        folder = prefix / ".lockguard" / "quarantine"
        line = f"the quarantines take {human_size(sum(sizes.values()))} in {folder}"
        if freeable:
            line += f"; `lockguard restore --prune` gives {human_size(freeable)} back"
        if stuck:
            line += (
                f"; {', '.join(stuck)} was interrupted: `lockguard restore {stuck[-1]} --prefix "
                f"{prefix}` finishes undoing it (--prune never deletes an interrupted run)"
            )
        ui.info(line)


def _confirm_prune(
    ui, prefix: Path, pruning: restore_session.Pruning, yes: bool, as_json: bool
) -> None:
    """The runs pruning takes (with what each frees), then a question (or --yes); asked under
    the environment's lock, before anything is deleted."""
    going, sizes = pruning.going, pruning.sizes
    if not as_json:
        ui.info(
            f"pruning deletes the quarantines of {counted(len(going), 'run')}, "
            f"{human_size(sum(sizes.values()))}:"
        )
        for r in going:
            after = "can no longer be restored" if r.state == "complete" else f"already {r.state}"
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


def _pruned(ui, pruned: restore_session.Pruned, as_json: bool) -> None:
    """What pruning did (the freed bytes were measured before the deletion, checked after)."""
    if not pruned.pruning.going:
        if as_json:
            ui.emit_json({"pruned": [], "freed_bytes": 0, "kept": pruned.pruning.kept})
        else:
            stuck = pruned.pruning.stuck
            ui.info(
                f"nothing to prune in {pruned.prefix}"
                + (
                    f" (kept: {', '.join(stuck)}: interrupted runs are "
                    "never pruned; `lockguard restore` finishes them)"
                    if stuck
                    else ""
                )
            )
        return
    if as_json:
        ui.emit_json({"pruned": pruned.gone, "freed_bytes": pruned.freed, "kept": pruned.left})
    else:
        ui.info(f"pruned {counted(len(pruned.gone), 'run')}, freed {human_size(pruned.freed)}")
