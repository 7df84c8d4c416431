"""`lockguard explain PKG`: why PKG is pinned at its version."""

from __future__ import annotations

import click

from lockguard.app.explain_session import explain_package
from lockguard.cli.common import get_ui, intent_option, json_option, profile_option


@click.command()
@click.argument("package")
@intent_option
@click.option(
    "--platform", default=None, help="Which platform's lock to read (default: the first)."
)
@profile_option
@json_option
@click.pass_context
def explain(ctx, package, intent_path, platform, profile, as_json) -> None:
    """Why PACKAGE is pinned at its version: the requirement chain and the knowledge rules."""
    ui = get_ui(ctx, "explain")
    found, platform = explain_package(package, intent_path, platform, warn=ui.warn, profile=profile)
    if as_json:
        ui.emit_json(found.to_dict())
        return
    sep = "==" if found.manager == "pip" else "="
    ui.out(f"{found.name}{sep}{found.version} ({found.manager}, {platform})")
    ui.out("  why: " + " <- ".join(found.chain))
    if len(found.parents) > 1:
        ui.out("  required by: " + ", ".join(found.parents))
    for rule in found.rules:
        ui.out(f"  knowledge: {rule['rule']}")
        ui.out(f"    ({rule['origin']}; source: {rule['source']})")
