"""Options and helpers shared by commands: --json, --intent, loading the intent and knowledge."""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.cli.output import Ui


def json_option(func):
    """`--json`: the command prints a versioned envelope on stdout instead of text."""

    def callback(ctx: click.Context, _param, value: bool) -> bool:
        ui = ctx.ensure_object(Ui)
        ui.json_mode = ui.json_mode or value
        return value

    return click.option("--json", "as_json", is_flag=True, expose_value=True, callback=callback,
                        help="Print a versioned JSON envelope on stdout.")(func)


def intent_option(func):
    return click.option("--intent", "intent_path", type=click.Path(path_type=Path, dir_okay=False),
                        default=None, help="Intent file (default: ./lockguard.toml, else pyproject.toml).")(func)


def get_ui(ctx: click.Context, command: str) -> Ui:
    ui = ctx.ensure_object(Ui)
    ui.command = command
    return ui


def load_project_intent(intent_path: Path | None, *, validate_conda: bool = True, ui: Ui | None = None):
    """Find and parse the intent; MatchSpecs are validated through the rattler adapter."""
    from lockguard.io.project.intent_file import load_project

    validator = None
    if validate_conda:
        def validator(spec: str):  # the rattler adapter is imported only for an intent with conda specs
            from lockguard.io.index.conda import matchspec_problem

            return matchspec_problem(spec)
    return load_project(intent_path, validate_matchspec=validator, warn=ui.warn if ui else None)

