"""`lockguard clean-install`: plan, quarantine stale files, apply the lock, verify."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.cli.common import get_ui, intent_option, json_option


@click.command("clean-install")
@intent_option
@click.option("--prefix", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="The environment to install into (a venv or a conda prefix).")
@click.option("--python", "python_exe", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="The environment of this interpreter.")
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@json_option
@click.pass_context
def clean_install(ctx, intent_path, prefix, python_exe, dry_run, yes, as_json) -> int:
    """Make an environment exactly the lock: quarantine stale shared libraries and leftovers (moved,
    never deleted), install the lock with pip --require-hashes (and conda records with rattler),
    uninstall what the lock does not pin, then verify. A failed apply is rolled back (exit 5)."""
    from lockguard.cli.common import load_project_intent
    from lockguard.cli.install_session import (
        apply_plan,
        build_plan,
        lock_must_be_current,
        undo_interrupted,
    )
    from lockguard.errors import InputError
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.knowledge import load_knowledge

    ui = get_ui(ctx, "clean-install")
    if (prefix is None) == (python_exe is None):
        raise InputError("clean-install needs exactly one of --prefix PREFIX or --python EXE",
                         hint="e.g. lockguard clean-install --prefix .venv --dry-run")
    intent = load_project_intent(intent_path, validate_conda=False, ui=ui)
    knowledge = load_knowledge()
    snapshot = read_snapshot(intent, scan_repo=False)
    lock_must_be_current(snapshot, knowledge)
    undo_interrupted(prefix or _prefix_of(python_exe), ui)
    scan, plan, platform = build_plan(snapshot, knowledge, prefix, python_exe)
    if dry_run or plan.changes_nothing:
        if as_json:
            ui.emit_json({"plan": plan.to_dict(), "applied": False})
        else:
            ui.out(plan.text().rstrip())
        return 1 if plan.reported and plan.changes_nothing and not dry_run else 0
    if not as_json:
        ui.out(plan.text().rstrip())
    if not yes:
        if not sys.stdin.isatty():
            raise InputError("clean-install changes the environment and stdin is not a terminal",
                             hint="review `--dry-run`, then pass --yes")
        click.confirm("apply this plan?", abort=True, err=True)
    quarantine_id = apply_plan(plan, snapshot, knowledge, platform, ui)
    if as_json:
        ui.emit_json({"plan": plan.to_dict(), "applied": True, "quarantine": quarantine_id})
    ui.info("the environment matches the lock" + (f"; quarantine {quarantine_id} (`lockguard restore "
                                                  f"{quarantine_id} --prefix {scan.prefix}` undoes it)" if quarantine_id else ""))
    return 1 if plan.reported else 0


def _prefix_of(python: Path) -> Path:
    from lockguard.io.env.prefix_scan import ask_interpreter

    return Path(ask_interpreter(python)["prefix"])
