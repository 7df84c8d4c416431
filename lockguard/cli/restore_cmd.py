"""`lockguard restore`: undo a clean-install from its quarantine."""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.cli.common import get_ui, json_option


@click.command()
@click.argument("quarantine_id", required=False)
@click.option("--prefix", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="The environment (default: the active one, $VIRTUAL_ENV or $CONDA_PREFIX).")
@click.option("--list", "list_only", is_flag=True, help="List the quarantines of the environment.")
@json_option
@click.pass_context
def restore(ctx, quarantine_id, prefix, list_only, as_json) -> None:
    """Put every file of a quarantine back, byte for byte and with its mode (default: the newest
    quarantine that was not restored yet). An interrupted clean-install is undone the same way."""
    import os

    from lockguard.errors import InputError
    from lockguard.io.env.quarantine import Quarantine, list_quarantines

    ui = get_ui(ctx, "restore")
    prefix = prefix or Path(os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX") or "")
    if not str(prefix):
        raise InputError("which environment? pass --prefix PREFIX", hint="e.g. lockguard restore --list --prefix .venv")
    found = list_quarantines(prefix)
    if list_only:
        if as_json:
            ui.emit_json([q.__dict__ for q in found])
        elif not found:
            ui.out(f"no quarantines in {prefix}")
        else:
            ui.table(["id", "state", "files", "created"], [(q.id, q.state, q.count, q.created) for q in found])
        return
    candidates = [q for q in found if q.state in ("complete", "incomplete")]
    if quarantine_id is None:
        if not candidates:
            raise InputError(f"nothing to restore in {prefix}", hint="`lockguard restore --list` shows the quarantines")
        quarantine_id = candidates[-1].id
    elif quarantine_id not in {q.id for q in found}:
        raise InputError(f"no quarantine {quarantine_id} in {prefix}", hint="`lockguard restore --list` shows them")
    elif quarantine_id not in {q.id for q in candidates}:
        raise InputError(f"quarantine {quarantine_id} was already restored")
    count = Quarantine(prefix, quarantine_id).restore()
    if as_json:
        ui.emit_json({"restored": quarantine_id, "files": count})
    ui.info(f"put back {count} files from quarantine {quarantine_id}")
