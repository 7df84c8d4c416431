"""`lockguard check`: reject drift. Static (no network, no solve) and fast: it runs on every commit."""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.cli.common import get_ui, intent_option, json_flag


@click.command()
@intent_option
@click.option("--env", "env_prefix", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also check an installed environment (a venv or conda prefix) against the lock.")
@click.option("--python", "python_exe", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also check the environment of this interpreter against the lock.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True)
@click.option("--strict", is_flag=True, help="Also report a conda side pinned from knowledge only, and missing hashes; "
              "with --env, warnings about the environment and the machine exit 1 too.")
@click.option("--verify-files", is_flag=True, help="With --env: also verify every installed file against its RECORD hash.")
@click.option("--no-cache", is_flag=True, help="Do not reuse the result of an identical earlier check.")
@click.option("--no-wait", is_flag=True, help="Exit 2 at once, instead of waiting, while a resolve writes the lock files "
              "or (with --env) a clean-install or restore changes the environment.")
@json_flag
@click.pass_context
def check(ctx, intent_path, env_prefix, python_exe, fmt, strict, verify_files, no_cache, no_wait) -> int:
    """Check that the intent, the lock files, the repository and (with --env) an installed
    environment agree. Exit 0 clean, 1 findings, 2 bad input.

    Without --env, an identical earlier check (same lockguard, constraints, options and file
    contents) is answered from the cache; --no-cache always runs the rules."""
    from lockguard.check.static import static_findings
    from lockguard.cli.check_fast import emit, from_here, lock_folder, shown_path
    from lockguard.cli.common import load_project_intent
    from lockguard.io.project.lock_set import LockSet
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.knowledge import load_knowledge

    ui = get_ui(ctx, "check")
    ui.json_mode = fmt == "json"
    # the lock set is read under a shared lock: never half of a resolve's commit (held to the end)
    ctx.with_resource(LockSet(lock_folder(intent_path), exclusive=False, command="check", wait=not no_wait,
                              on_wait=ui.info, warn=ui.warn))
    intent = load_project_intent(intent_path, ui=ui)
    snapshot = read_snapshot(intent)
    findings = static_findings(snapshot, load_knowledge(), strict_mode=strict)
    checked = shown_path(intent.source.path)
    if env_prefix or python_exe:
        from lockguard.app.env_check import environment_exit_code, environment_findings

        environment = environment_findings(snapshot, load_knowledge(), prefix=env_prefix, python=python_exe,
                                           verify_files=verify_files, wait=not no_wait, on_wait=ui.info)
        checked += f" and {env_prefix or python_exe}"
        code = environment_exit_code(findings, environment, strict=strict)
        interrupted = [f for f in environment if f.code == "LG222"]  # first, with its fix: the rest may be its doing
        rest = [f for f in environment if f.code != "LG222"]
        return emit(ui, from_here(interrupted + findings + rest, intent.source.root), fmt, checked, code)
    return emit(ui, from_here(findings, intent.source.root), fmt, checked)
