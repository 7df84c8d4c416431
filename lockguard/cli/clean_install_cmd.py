"""`lockguard clean-install`: plan, then apply as one transaction, verify, roll back on failure."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from lockguard.app import install_session
from lockguard.cli.common import get_ui, intent_option, json_option, profile_option
from lockguard.cli.install_progress import Progress
from lockguard.errors import InputError
from lockguard.model.finding import ERROR
from lockguard.model.wording import counted, human_size


@click.command("clean-install")
@intent_option
@click.option(
    "--prefix",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="The environment to install into (a venv or a conda prefix).",
)
@click.option(
    "--python",
    "python_exe",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The environment of this interpreter (a path; relative to the working directory).",
)
@click.option(
    "--from",
    "from_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Install from this pylock.toml (PEP 751) instead of requirements.lock. Inside a project "
    "it must pin what the project's lock pins; outside one it is the whole lock.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the plan; change nothing (-v lists every stale file)."
)
@click.option("--yes", "-y", is_flag=True, help="Apply without asking.")
@click.option(
    "--installer",
    type=click.Choice(install_session.INSTALLERS),
    default=install_session.DEFAULT_INSTALLER,
    show_default=True,
    help="The engine that installs the locked files: uv (the uv wheel lockguard depends on; "
    "needs no pip in the environment) or pip (the environment's own, where uv cannot run).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when findings outside the prefix (loader paths, user site) remain.",
)
@click.option(
    "--verify-files",
    is_flag=True,
    help="Also hash every locked file; reinstall distributions whose files changed.",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="Exit 2 at once when another lockguard run holds the environment, "
    "instead of waiting for it.",
)
@profile_option
@json_option
@click.pass_context
def clean_install(
    ctx,
    intent_path,
    prefix,
    python_exe,
    from_file,
    dry_run,
    yes,
    installer,
    strict,
    verify_files,
    no_wait,
    profile,
    as_json,
) -> int:
    """Make an environment exactly the lock, as one transaction: every stale file and every file of
    a distribution that leaves or changes version moves into a quarantine (never deleted), uv (or
    pip, with --installer pip) installs the lock's files (--require-hashes --no-deps) into what
    remains, and the result is verified
    by effect (every RECORD file present, an import smoke). A failure is rolled back (exit 5, with
    its cause); Ctrl-C, SIGTERM or SIGHUP rolls back too and exits 130. `lockguard restore` undoes a
    finished run, `lockguard restore --prune` gives the quarantine's disk space back. The
    environment is locked while this runs: a second run waits for it (or, with --no-wait, exits 2).
    Exit 0 when the environment matches the lock."""
    ui = get_ui(ctx, "clean-install")
    progress = Progress(ui)
    outcome = install_session.clean_install(
        intent_path=intent_path,
        prefix=prefix,
        python_exe=python_exe,
        from_file=from_file,
        dry_run=dry_run,
        yes=yes,
        installer=installer,
        strict=strict,
        verify_files=verify_files,
        wait=not no_wait,
        progress=progress,
        show_plan=lambda plan: None if as_json else ui.out(_plan_text(ui, plan)),
        confirm=_confirm,
        warn=ui.warn,
        profile=profile,
    )
    if outcome.plan is None:
        return _report_interrupted(ui, outcome.prefix, outcome.previews, as_json)
    if outcome.applied is None:  # a dry run, or nothing to change
        if as_json:
            ui.emit_json(
                {"plan": outcome.plan.to_dict(), "applied": False}, exit_code=outcome.failing
            )
        else:
            ui.out(_plan_text(ui, outcome.plan))
        return outcome.failing
    _report_applied(ui, progress, outcome, as_json)
    return outcome.failing


def _plan_text(ui, plan) -> str:
    return plan.text(verbose=ui.verbose > 0).rstrip()


def _confirm() -> None:
    """The question before the transaction (a run without a terminal needs --yes)."""
    if not sys.stdin.isatty():
        raise InputError(
            "clean-install changes the environment and stdin is not a terminal",
            hint="review `--dry-run`, then pass --yes",
        )
    click.confirm("apply this plan?", abort=True, err=True)


def _report_applied(ui, progress: Progress, outcome, as_json: bool) -> None:
    """What the transaction did, the findings it reported and left, and how to undo it."""
    plan, applied, errors = outcome.plan, outcome.applied, outcome.errors
    for warning in applied.warnings:
        progress.warn(warning)
    for finding in plan.reported:
        line = f"{finding.code} {finding.message}" + (
            f" (hint: {finding.hint})" if finding.hint else ""
        )
        if finding.severity == ERROR:
            progress.say(f"error: {line}")
        else:
            progress.warn(line)
    if as_json:
        ui.emit_json(
            {
                "plan": plan.to_dict(),
                "applied": True,
                "quarantine": applied.quarantine,
                "quarantine_folder": applied.root,
                "quarantined_files": applied.quarantined,
                "quarantined_bytes": applied.quarantined_bytes,
                "installed": applied.installed,
                "removed": applied.removed,
                "imported": applied.imported,
                "warnings": applied.warnings + [f.message for f in plan.reported],
            },
            exit_code=outcome.failing,
        )
        return
    said = (
        f"the lock's files are installed, but {counted(len(errors), 'error')} outside what "
        f"clean-install changes {'remains' if len(errors) == 1 else 'remain'} (above; "
        "`lockguard check --env` reports the same)"
        if errors
        else "the environment matches the lock"
    )
    progress.say(
        f"{said}; `lockguard restore {applied.quarantine} --prefix {outcome.prefix}` undoes "
        "this run"
    )
    if applied.quarantined:
        progress.say(
            f"the quarantine holds {counted(applied.quarantined, 'file')}, "
            f"{human_size(applied.quarantined_bytes)}, in {applied.root}; "
            f"`lockguard restore --prune --prefix {outcome.prefix}` deletes it once you no "
            "longer need to undo this run"
        )


def _report_interrupted(ui, root: Path, previews: Sequence[dict], as_json: bool) -> int:
    """A dry run changes nothing, not even an interrupted run's leftovers: it says what restore
    does."""
    if as_json:
        ui.emit_json({"interrupted": previews, "plan": None, "applied": False}, exit_code=1)
        return 1
    for item in previews:
        what = (
            f"the restore of clean-install {item['id']} in {root} was interrupted"
            if item["state"] == "restore-interrupted"
            else f"clean-install {item['id']} in {root} was interrupted"
        )
        ui.out(
            f"{what} (last step: {item['phase']}).\n"
            f"  `lockguard restore {item['id']} --prefix {root}` (or a clean-install without "
            "--dry-run, which finishes it first) would remove "
            f"{counted(item['remove'], 'file')} the interrupted run installed and put back "
            f"{item['put_back']} quarantined files."
        )
    ui.out("no plan: it depends on the environment after that undo; nothing was changed.")
    return 1
