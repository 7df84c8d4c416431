"""Options and helpers shared by commands: --json, --intent, loading the intent and knowledge."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lockguard.app.project import load_project_intent as load
from lockguard.cli.output import Ui

if TYPE_CHECKING:
    from pathlib import Path


def _json_mode(ctx: click.Context, _param, value):
    if value is True or value == "json":
        ui = ctx.ensure_object(Ui)
        ui.json_mode = True
    return value


def json_option(func):
    """`--json`, or `--format text|json`: the command prints a versioned envelope on stdout instead
    of text. Both spellings work on every command (check and fleet spell it --format)."""

    @functools.wraps(func)
    def command(*args, as_json: bool = False, output_format: str | None = None, **kwargs):
        return func(*args, as_json=as_json or output_format == "json", **kwargs)

    command = click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json"]),
        default=None,
        callback=_json_mode,
        help="text (default) or json (the same as --json).",
    )(command)
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=_json_mode,
        help="Print a versioned JSON envelope on stdout.",
    )(command)


def json_flag(func):
    """`--json` next to a command's own `--format` choice: the same as `--format json`."""

    @functools.wraps(func)
    def command(*args, as_json: bool = False, fmt: str = "text", **kwargs):
        return func(*args, fmt="json" if as_json else fmt, **kwargs)

    return click.option(
        "--json", "as_json", is_flag=True, callback=_json_mode, help="The same as --format json."
    )(command)


def intent_option(func):
    return click.option(
        "--intent",
        "intent_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Intent file (default: ./lockguard.toml, else pyproject.toml).",
    )(func)


def profile_option(func):
    """--profile NAME: which of the intent's [profiles] (one project, many machines)."""
    return click.option(
        "--profile",
        default=None,
        metavar="NAME",
        help="The intent's profile to use (default: the one that fits this machine).",
    )(func)


def get_ui(ctx: click.Context, command: str) -> Ui:
    ui = ctx.ensure_object(Ui)
    ui.command = command
    return ui


def load_project_intent(
    intent_path: Path | None, *, validate_conda: bool = True, ui: Ui | None = None
):
    """Find and parse the intent (lockguard.app.project), warnings through the Ui."""
    return load(intent_path, validate_conda=validate_conda, warn=ui.warn if ui else None)
