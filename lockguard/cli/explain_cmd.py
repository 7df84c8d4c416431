"""`lockguard explain PKG`: why PKG is pinned at its version."""

from __future__ import annotations

import click

from lockguard.cli.common import get_ui, intent_option, json_option, load_project_intent
from lockguard.errors import InputError


@click.command()
@click.argument("package")
@intent_option
@click.option("--platform", default=None, help="Which platform's lock to read (default: the first).")
@json_option
@click.pass_context
def explain(ctx, package, intent_path, platform, as_json) -> None:
    """Why PACKAGE is pinned at its version: the requirement chain and the knowledge rules."""
    from lockguard.check.explain import explain_conda, explain_pip
    from lockguard.io.project.project_files import parse_lock, read_lock_text
    from lockguard.knowledge import load_knowledge
    from lockguard.lockfiles.syntax import clip
    from lockguard.model.lock_paths import lock_file

    ui = get_ui(ctx, "explain")
    intent = load_project_intent(intent_path, ui=ui)
    if platform is not None and platform not in intent.platforms:
        raise InputError(f"--platform: the lock has no {clip(platform)} section (it locks "
                         f"{', '.join(intent.platforms)})", key="platforms",
                         hint=f"pass one of: {', '.join(intent.platforms)}; or add the platform to the intent's "
                         "platforms and run `lockguard resolve`")
    platform = platform or intent.platforms[0]
    root = intent.source.root
    knowledge = load_knowledge()
    req_path = root / lock_file(intent, "requirements", platform)
    env_path = root / lock_file(intent, "environment", platform)
    req_text = read_lock_text(req_path)
    if req_text is None:
        raise InputError(f"{req_path} does not exist", file=str(req_path), hint="run `lockguard resolve` first")
    lock = parse_lock("requirements", req_text, str(req_path))
    found = explain_pip(package, lock, knowledge, platform, intent.source.path.name)
    env_text = None if intent.pip_only else read_lock_text(env_path)
    if found is None and env_text is not None:
        env = parse_lock("environment", env_text, str(env_path))
        if package in env.conda:
            found = explain_conda(package, env.conda[package][0], knowledge, intent.conda)
    if found is None:
        raise InputError(f"{clip(package)} is not in {req_path.name}" + (f" or {env_path.name}" if env_text else ""),
                         hint="`lockguard explain` reads the lock; run `lockguard resolve` if the intent changed")
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
