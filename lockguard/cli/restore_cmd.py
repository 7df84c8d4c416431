"""`lockguard restore`: undo a clean-install, pip's part included."""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.cli.common import get_ui, json_option


def _short(items: tuple[str, ...], width: int = 60) -> str:
    text = ", ".join(items)
    if len(text) <= width:
        return text or "-"
    shown = []
    for item in items:
        if len(", ".join([*shown, item])) > width - 12:
            break
        shown.append(item)
    return ", ".join(shown) + f" +{len(items) - len(shown)} more"


@click.command()
@click.argument("quarantine_id", required=False)
@click.option("--prefix", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="The environment (default: the active one, $VIRTUAL_ENV or $CONDA_PREFIX).")
@click.option("--list", "list_only", is_flag=True, help="List the clean-install runs of the environment.")
@json_option
@click.pass_context
def restore(ctx, quarantine_id, prefix, list_only, as_json) -> None:
    """Undo a clean-install (default: the newest one not undone yet): remove every file it installed
    and put every quarantined file back, byte for byte and with its mode. An interrupted run is
    undone the same way. Runs are undone newest first."""
    import os

    from lockguard.errors import InputError
    from lockguard.io.env.quarantine import Quarantine, list_quarantines
    from lockguard.io.env.transaction import undo

    ui = get_ui(ctx, "restore")
    prefix = prefix or Path(os.environ.get("VIRTUAL_ENV") or os.environ.get("CONDA_PREFIX") or "")
    if not str(prefix):
        raise InputError("which environment? pass --prefix PREFIX", hint="e.g. lockguard restore --list --prefix .venv")
    from lockguard.cli.env_check import must_be_environment

    must_be_environment(prefix, hint="restore undoes clean-installs, which run only in venvs and conda prefixes; "
                        "pass the environment's folder")
    found = list_quarantines(prefix)
    if list_only:
        if as_json:
            ui.emit_json([{**q.__dict__, "removed": list(q.removed), "installed": list(q.installed)} for q in found])
        elif not found:
            ui.out(f"no clean-install runs in {prefix}")
        else:
            ui.table(["id", "state", "created", "quarantined", "removed", "installed"],
                     [(q.id, q.state, q.created, q.count, _short(q.removed), _short(q.installed)) for q in found])
        return
    candidates = [q for q in found if q.state in ("complete", "incomplete")]
    if quarantine_id is None:
        if not candidates:
            raise InputError(f"nothing to restore in {prefix}", hint="`lockguard restore --list` shows the runs")
        quarantine_id = candidates[-1].id
    elif quarantine_id not in {q.id for q in found}:
        raise InputError(f"no clean-install {quarantine_id} in {prefix}", hint="`lockguard restore --list` shows them")
    elif quarantine_id not in {q.id for q in candidates}:
        raise InputError(f"clean-install {quarantine_id} was already undone")
    newer = [q.id for q in candidates if q.id > quarantine_id]
    if newer:
        raise InputError(f"clean-install {quarantine_id} is older than {', '.join(newer)}, which changed the same "
                         "environment afterwards", hint=f"restore {newer[-1]} first (runs are undone newest first)")
    result = undo(Quarantine(prefix, quarantine_id))
    if as_json:
        ui.emit_json({"restored": quarantine_id, "files": result.put_back, "removed": result.removed,
                      "displaced": result.displaced})
    ui.info(f"undid clean-install {quarantine_id}: removed {result.removed} files it had installed, put back "
            f"{result.put_back} files")
    if result.displaced:
        ui.warn(f"{len(result.displaced)} files changed after the run were kept in "
                f"{Quarantine(prefix, quarantine_id).root / 'displaced'}: {', '.join(result.displaced[:5])}")
