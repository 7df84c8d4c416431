"""`lockguard check`: reject drift. Static (no network, no solve) and fast: it runs on every commit.

A plain check stores its output under its command line; the next identical command line is
answered before click is imported (cli/boundary.py, app/check_replay.py) while the files it read
keep their bytes. `--no-cache` always runs the rules."""

from __future__ import annotations

import sys

import click

from lockguard.cli.common import get_ui, json_flag
from lockguard.cli.output import Ui


# the paths are taken as text, without pathlib (a fifth of Python's start-up, on every commit)
@click.command()
@click.option(
    "--intent",
    "intent_path",
    default=None,
    help="Intent file (default: ./lockguard.toml, else pyproject.toml).",
)
@click.option(
    "--env",
    "env_prefix",
    type=click.Path(file_okay=False),
    default=None,
    help="Also check an installed environment (a venv or conda prefix) against the lock.",
)
@click.option(
    "--python",
    "python_exe",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also check the environment of this interpreter against the lock.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
)
@click.option(
    "--strict",
    is_flag=True,
    help="Also report a conda side pinned from knowledge only, and missing hashes; "
    "with --env, warnings about the environment and the machine exit 1 too.",
)
@click.option(
    "--verify-files",
    is_flag=True,
    help="With --env: also verify every installed file against its RECORD hash.",
)
@click.option(
    "--no-cache", is_flag=True, help="Do not reuse the result of an identical earlier check."
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="Exit 2 at once, instead of waiting, while a resolve writes the lock files "
    "or (with --env) a clean-install or restore changes the environment.",
)
@click.option(
    "--profile",
    default=None,
    metavar="NAME",
    help="Check only this profile of the intent's [profiles] (with --env: default the one that "
    "fits this machine).",
)
@json_flag
@click.pass_context
def check(
    ctx,
    intent_path,
    env_prefix,
    python_exe,
    fmt,
    strict,
    verify_files,
    no_cache,
    no_wait,
    profile,
) -> int:
    """Check that the intent, the lock files, the repository and (with --env) an installed
    environment agree. Exit 0 clean, 1 findings, 2 bad input.

    Without --env, an identical earlier check (same lockguard, constraints, options and file
    contents) is answered from the cache; --no-cache always runs the rules."""
    from lockguard.app.check_session import check as run_check

    ui = get_ui(ctx, "check")
    ui.json_mode = fmt == "json"
    ui.github_mode = fmt == "github"

    def show(checked) -> tuple[str, int]:
        output, code = render_findings(ui, checked.findings, fmt, checked.shown, checked.code)
        sys.stdout.write(output)
        return output, code

    # github's paths depend on GITHUB_WORKSPACE, which the memo does not key
    kept = fmt != "github" and not (no_cache or ui.verbose)
    return run_check(
        ui,
        intent_path=intent_path,
        env_prefix=env_prefix,
        python_exe=python_exe,
        intent_file=lambda: _intent_file(ctx, intent_path),
        strict=strict,
        verify_files=verify_files,
        wait=not no_wait,
        show=show,
        remember_as=ui.command_line if kept else None,
        json=fmt == "json",
        profile=profile,
    )


def _intent_file(ctx: click.Context, value: str | None):
    """--intent as the other commands take it (a Path; a folder is a usage error)."""
    if value is None:
        return None
    from pathlib import Path

    param = next(p for p in ctx.command.params if p.name == "intent_path")
    return click.Path(path_type=Path, dir_okay=False).convert(value, param, ctx)


def render_findings(
    ui: Ui, findings: list, fmt: str, checked: str, code: int | None = None
) -> tuple[str, int]:
    from lockguard.check import render
    from lockguard.model.finding import failing

    if code is None:
        code = 1 if failing(findings) else 0
    if fmt == "json":
        import json

        body = ui.envelope(
            render.json_data(findings, checked=checked), ok=code == 0, exit_code=code
        )
        return json.dumps(body, indent=2, sort_keys=True, default=str) + "\n", code
    if fmt == "github":
        from lockguard.app.check_session import annotation_folders

        cwd, root = annotation_folders()
        return render.github(findings, cwd=cwd, root=root), code
    return render.text(findings, checked=checked), code
