"""`lockguard resolve`: intent -> environment.yml, requirements.lock, conda-lock.yml."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lockguard.app.prefetch import prefetch
from lockguard.check.changes_render import text_lines, to_data
from lockguard.cli.common import get_ui, intent_option, json_option
from lockguard.cli.output import Ui
from lockguard.cli.resolve_progress import ResolveProgress

if TYPE_CHECKING:  # the session loads after the prefetch started (app/prefetch.py)
    from lockguard.app.resolve_outcome import ResolveOutcome


@click.command()
@intent_option
@click.option(
    "--platform", "platforms", multiple=True, help="Resolve only these of the intent's platforms."
)
@click.option(
    "--offline", is_flag=True, help="Resolve from the cache alone (exit 4 naming what is missing)."
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Ignore cached index pages and the resolution memo (metadata stays cached: it never "
    "changes).",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Exit 1 if a resolve that keeps the locked versions would write other lock files; write "
    "nothing.",
)
@click.option(
    "--upgrade",
    is_flag=True,
    help="Resolve every package afresh (the lock's versions are not preferred).",
)
@click.option(
    "--upgrade-package",
    "upgrade_packages",
    multiple=True,
    metavar="NAME[==VERSION]",
    help="Let NAME move (to VERSION, if given); torch, torchvision or torchaudio frees the whole "
    "torch family. Repeatable.",
)
@click.option(
    "--accept-edits",
    is_flag=True,
    help="Adopt the pins edited by hand in the lock files (each demanded as "
    "--upgrade-package NAME==VERSION demands it) instead of reverting them.",
)
@click.option(
    "--conda-from-knowledge",
    is_flag=True,
    help="Pin the conda side from the knowledge, without a solve.",
)
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    metavar="NAME",
    help="Resolve only this profile of the intent's [profiles] (repeatable; default: all).",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="Exit 2 instead of waiting when another lockguard run holds the lock files.",
)
@json_option
@click.pass_context
def resolve(
    ctx,
    intent_path,
    platforms,
    offline,
    refresh,
    check_only,
    upgrade,
    upgrade_packages,
    accept_edits,
    conda_from_knowledge,
    profiles,
    no_wait,
    as_json,
) -> int:
    """Resolve the intent into fully pinned, hashed lock files.

    The CUDA stack (torch variant, toolkit, cuDNN, NCCL, compilers, sysroot) comes from lockguard's
    knowledge; the conda side is solved with rattler (or pinned from the knowledge); the pip side is
    resolved for the target platform and Python, with hashes from the index and no wheel downloads.
    Every version of the existing lock that still fits is kept: only what the intent change forces
    moves, unless --upgrade or --upgrade-package says otherwise. A lock file edited by hand is not
    a starting point: its edits are reverted to the pins lockguard wrote (or adopted with
    --accept-edits), and reported. What changed is reported.
    """
    # first: the pages come while the rest loads
    prefetch(intent_path, refresh=refresh, offline=offline)
    # the command's session, imported after the prefetch has started (app/prefetch.py says why)
    from lockguard.app.resolve_session import resolve

    ui = get_ui(ctx, "resolve")
    outcome = resolve(
        ui,
        intent_path=intent_path,
        platforms=tuple(platforms),
        offline=offline,
        refresh=refresh,
        check_only=check_only,
        upgrade=upgrade,
        upgrade_packages=tuple(upgrade_packages),
        accept_edits=accept_edits,
        conda_from_knowledge=conda_from_knowledge,
        wait=not no_wait,
        profiles=tuple(profiles),
        watch=lambda counts: ResolveProgress(ui, counts),
    )
    if check_only:
        return _show_check(ui, outcome, as_json=as_json)
    for line in text_lines(outcome.changes):
        ui.info(line)
    if as_json:
        ui.emit_json({**outcome.summary, "changes": to_data(outcome.changes)})
    return 0


def _show_check(ui: Ui, outcome: ResolveOutcome, *, as_json: bool) -> int:
    """--check's verdict: the JSON envelope, then what is out of date and what would change."""
    changes, stale, vanished = outcome.changes, outcome.stale, outcome.vanished
    if as_json:
        ui.emit_json(
            {
                "current": outcome.current,
                "stale": [str(p) for p in stale],
                "vanished": [{"name": v.name, "locked": v.locked, "now": v.now} for v in vanished],
                "changes": to_data(changes),
            },
            ok=outcome.current,
            exit_code=outcome.exit_code,
        )
    for item in vanished:
        ui.info(f"out of date: {item.text()}")
    for path in stale:
        ui.info(f"out of date: {path}")
    if stale and not changes.unchanged:
        ui.info("a resolve would change:")
        for line in text_lines(changes, list_new=True):
            ui.info(f"  {line}")
    if outcome.current:
        ui.info("the lock files are current")
    return outcome.exit_code
