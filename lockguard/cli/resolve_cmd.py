"""`lockguard resolve`: intent -> environment.yml, requirements.lock, conda-lock.yml."""

from __future__ import annotations

import click

from lockguard.cli.common import get_ui, intent_option, json_option, load_project_intent


@click.command()
@intent_option
@click.option("--platform", "platforms", multiple=True, help="Resolve only these of the intent's platforms.")
@click.option("--offline", is_flag=True, help="Resolve from the cache alone (exit 4 naming what is missing).")
@click.option("--refresh", is_flag=True, help="Ignore cached index pages and the resolution memo (metadata stays cached: it never changes).")
@click.option("--check", "check_only", is_flag=True, help="Exit 1 if the lock files are not what a resolve would write now; write nothing.")
@click.option("--conda-from-knowledge", is_flag=True, help="Pin the conda side from the knowledge, without a solve.")
@click.option("--no-wait", is_flag=True, help="Exit 2 instead of waiting when another lockguard run holds the lock files.")
@json_option
@click.pass_context
def resolve(ctx, intent_path, platforms, offline, refresh, check_only, conda_from_knowledge, no_wait, as_json) -> int:
    """Resolve the intent into fully pinned, hashed lock files.

    The CUDA stack (torch variant, toolkit, cuDNN, NCCL, compilers, sysroot) comes from lockguard's
    knowledge; the conda side is solved with rattler (or pinned from the knowledge); the pip side is
    resolved for the target platform and Python, with hashes from the index and no wheel downloads.
    """
    from lockguard.cli.resolve_session import ResolveSession

    ui = get_ui(ctx, "resolve")
    intent = load_project_intent(intent_path, ui=ui)
    session = ResolveSession(intent, ui, offline=offline, refresh=refresh,
                             conda_from_knowledge=conda_from_knowledge, platforms=tuple(platforms))
    ctx.with_resource(session.lock_set(exclusive=not check_only, wait=not no_wait))  # held until the command ends
    resolved = session.resolve()
    outputs = resolved.outputs
    if not resolved.remembered:  # a remembered resolution passed this gate with the same inputs
        session.refuse_what_check_rejects(resolved.platforms, outputs)
        session.remember()
    if check_only:
        stale = session.stale(outputs)
        if as_json:
            ui.emit_json({"current": not stale, "stale": [str(p) for p in stale]}, ok=not stale,
                         exit_code=1 if stale else 0)
        for path in stale:
            ui.info(f"out of date: {path}")
        if not stale:
            ui.info("the lock files are current")
        return 1 if stale else 0
    written = session.write(outputs)
    if as_json:
        ui.emit_json(session.summary(resolved, written))
    return 0
