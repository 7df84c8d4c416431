"""`lockguard init`: write the intent, to lockguard.toml or [tool.lockguard] in pyproject.toml."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.cli.common import get_ui
from lockguard.errors import InputError


@click.command()
@click.option("--python", "python", default=None, help="Python X.Y (default: the running Python).")
@click.option("--cuda", default="none", show_default=True, help='CUDA X.Y, "none" (CPU) or "auto" (from the driver).')
@click.option("--channel", "channels", multiple=True, help="Conda channel (repeatable; default conda-forge).")
@click.option("--conda", "conda_specs", multiple=True, help="Extra conda spec (repeatable).")
@click.option("--pyproject", is_flag=True, help="Write [tool.lockguard] into pyproject.toml.")
@click.option("--force", is_flag=True, help="Replace an existing intent.")
@click.argument("packages", nargs=-1)
@click.pass_context
def init(ctx, python, cuda, channels, conda_specs, pyproject, force, packages) -> None:
    """Write the intent: what to lock (Python, CUDA, pip and conda packages).

    PACKAGES are pip requirements, e.g. `lockguard init --python 3.11 --cuda 12.1 "torch==2.1.*" deepspeed`.
    """
    from lockguard.io.index.conda import matchspec_problem
    from lockguard.io.project.files import write_atomic
    from lockguard.model.intent_parse import parse_intent
    from lockguard.model.intent_write import add_intent_to_pyproject, new_intent_document

    ui = get_ui(ctx, "init")
    python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    root = Path.cwd()
    target = root / ("pyproject.toml" if pyproject else "lockguard.toml")
    values = {
        "python": python,
        "cuda": cuda,
        "channels": list(channels) if channels else None,
        "conda": list(conda_specs),
        "pip": list(packages),
    }
    existing = _existing_intent(root)
    if existing and not force:
        where = f"{existing} [tool.lockguard]" if existing.name == "pyproject.toml" else str(existing)
        raise InputError(f"an intent already exists: {where}", file=str(existing),
                         hint="pass --force to replace it, or edit it by hand")
    if pyproject:
        if not target.is_file():
            raise InputError(f"{target} does not exist", file=str(target),
                             hint="run `lockguard init` without --pyproject to write lockguard.toml")
        text = add_intent_to_pyproject(target.read_text(encoding="utf-8"), values, force=force, path=target)
    else:
        text = new_intent_document(values)
    # validate before writing: a bad --cuda or package never reaches the disk
    parse_intent(text, target, validate_matchspec=matchspec_problem)
    write_atomic(target, text)
    where = f"{target.name} [tool.lockguard]" if pyproject else target.name
    ui.info(f"wrote {where}; next: lockguard resolve")


def _existing_intent(root: Path) -> Path | None:
    from lockguard.io.project.intent_file import find_intent

    try:
        return find_intent(root)
    except InputError:
        return None
