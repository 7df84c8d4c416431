"""`lockguard diff`: what changed between two locks, for review (the CUDA stack first).

    lockguard diff OLD NEW              two lock files of one kind (requirements.lock,
                                        environment.yml, conda-lock.yml, pylock.toml)
    lockguard diff --git REV [FILE]     the project's lock files (or FILE) at REV against the
                                        working tree
    lockguard diff                      the same as --git HEAD

Exit 0 when nothing changed, 1 when something did (as diff(1) does), 2 for bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.app.diff_session import diff as compare
from lockguard.check.changes_render import markdown, text_lines, to_data
from lockguard.cli.common import get_ui, intent_option, json_flag, profile_option


@click.command()
@click.argument("old", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.argument("new", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--git",
    "revision",
    default=None,
    metavar="REV",
    help="Compare the lock files at this git revision with the working tree (default HEAD "
    "without OLD NEW).",
)
@intent_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: a table a CI job can post on a pull request.",
)
@profile_option
@json_flag
@click.pass_context
def diff(ctx, old, new, revision, intent_path, fmt, profile) -> int:
    """What changed between two locks: added, removed, upgraded, downgraded, and the CUDA facts."""
    ui = get_ui(ctx, "diff")
    ui.json_mode = ui.json_mode or fmt == "json"
    outcome = compare(
        old, new, revision=revision, intent_path=intent_path, warn=ui.warn, profile=profile
    )
    if fmt == "json":
        ui.emit_json(to_data(outcome.changes), ok=True, exit_code=outcome.exit_code)
    elif fmt == "markdown":
        ui.out(markdown(outcome.changes, title=outcome.title).rstrip("\n"))
    else:
        for line in text_lines(outcome.changes, list_new=True):
            ui.out(line)
    return outcome.exit_code
