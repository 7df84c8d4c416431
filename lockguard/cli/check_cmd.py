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
@json_flag
@click.pass_context
def check(
    ctx, intent_path, env_prefix, python_exe, fmt, strict, verify_files, no_cache, no_wait
) -> int:
    """Check that the intent, the lock files, the repository and (with --env) an installed
    environment agree. Exit 0 clean, 1 findings, 2 bad input.

    Without --env, an identical earlier check (same lockguard, constraints, options and file
    contents) is answered from the cache; --no-cache always runs the rules."""
    from lockguard.app.check import environment_check, project_lock, remember, static_check

    ui = get_ui(ctx, "check")
    ui.json_mode = fmt == "json"
    ui.github_mode = fmt == "github"
    # the lock set is read under a shared lock: never half of a resolve's commit (held to the end)
    ctx.with_resource(project_lock(intent_path, wait=not no_wait, on_wait=ui.info, warn=ui.warn))
    if env_prefix is not None or python_exe is not None:
        from pathlib import Path

        env_prefix, python_exe = (
            Path(p) if p is not None else None for p in (env_prefix, python_exe)
        )
        checked = environment_check(
            _intent_file(ctx, intent_path),
            prefix=env_prefix,
            python=python_exe,
            strict=strict,
            verify_files=verify_files,
            wait=not no_wait,
            on_wait=ui.info,
            warn=ui.warn,
        )
    else:
        # what an empty path names (pathlib's reading)
        intent_path = "." if intent_path == "" else intent_path
        checked = static_check(intent_path, strict=strict, warn=ui.warn)
    output, code = render_findings(ui, checked.findings, fmt, checked.shown, checked.code)
    sys.stdout.write(output)
    if (
        env_prefix is None
        and python_exe is None
        and fmt != "github"  # its paths depend on GITHUB_WORKSPACE, which the memo does not key
        and not (no_cache or ui.verbose)
        and ui.command_line is not None
    ):
        remember(
            ui.command_line,
            checked,
            intent_path,
            wait=not no_wait,
            json=fmt == "json",
            output=output,
            code=code,
        )
    return code


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
        from lockguard.app.check import annotation_folders

        cwd, root = annotation_folders()
        return render.github(findings, cwd=cwd, root=root), code
    return render.text(findings, checked=checked), code
