"""`lockguard init`: write the intent, to lockguard.toml or [tool.lockguard] in pyproject.toml; from
options, or adopted from existing files (`--from`) or a working environment (`--from-env`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.cli.common import get_ui
from lockguard.errors import InputError


@click.command()
@click.option("--python", "python", default=None, help="Python X.Y (default: the files' or the running Python).")
@click.option("--cuda", default=None, help='CUDA X.Y, "none" (CPU) or "auto" (from the driver). Default: the files\' or none.')
@click.option("--channel", "channels", multiple=True, help="Conda channel (repeatable; default conda-forge).")
@click.option("--conda", "conda_specs", multiple=True, help="Extra conda spec (repeatable).")
@click.option("--index", "indexes", multiple=True, help="Package index URL for pip packages (repeatable).")
@click.option("--from", "from_files", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Adopt an existing requirements.txt/.in, pyproject.toml, environment.yml or Dockerfile (repeatable).")
@click.option("--from-env", "from_env", type=click.Path(path_type=Path), default=None,
              help="Adopt a working environment: a venv or conda prefix, or its python executable.")
@click.option("--top-level-only", is_flag=True, help="With --from-env: pin only what nothing else requires.")
@click.option("--pylock", is_flag=True, help="Also write pylock.toml (PEP 751) on resolve.")
@click.option("--pyproject", is_flag=True, help="Write [tool.lockguard] into pyproject.toml.")
@click.option("--force", is_flag=True, help="Replace an existing intent.")
@click.argument("packages", nargs=-1)
@click.pass_context
def init(ctx, python, cuda, channels, conda_specs, indexes, from_files, from_env, top_level_only, pylock, pyproject,
         force, packages) -> None:
    """Write the intent: what to lock (Python, CUDA, pip and conda packages).

    PACKAGES are pip requirements, e.g. `lockguard init --python 3.11 --cuda 12.1 "torch==2.1.*" deepspeed`.
    With --from, the values come from the files (`lockguard init --from requirements.txt --from Dockerfile`);
    files that disagree are refused until --python/--cuda decide.
    """
    from lockguard.io.index.conda import matchspec_problem
    from lockguard.io.project.files import write_atomic
    from lockguard.model.intent_parse import parse_intent
    from lockguard.model.intent_write import add_intent_to_pyproject, new_intent_document

    ui = get_ui(ctx, "init")
    root = Path.cwd()
    target = root / ("pyproject.toml" if pyproject else "lockguard.toml")
    existing = _existing_intent(root)
    if existing and not force:
        where = f"{existing} [tool.lockguard]" if existing.name == "pyproject.toml" else str(existing)
        raise InputError(f"an intent already exists: {where}", file=str(existing),
                         hint="pass --force to replace it, or edit it by hand")
    if pyproject and not target.is_file():
        raise InputError(f"{target} does not exist", file=str(target),
                         hint="run `lockguard init` without --pyproject to write lockguard.toml")
    if top_level_only and from_env is None:
        raise InputError("--top-level-only goes with --from-env", hint="add --from-env PREFIX, or drop --top-level-only")
    notes: dict = {}
    header: list[str] = []
    if from_files or from_env is not None:
        from lockguard.cli.init_from import adopted_values

        values, notes, header = adopted_values(ui, files=from_files, env=from_env, python=python, cuda=cuda,
                                               indexes=indexes, top_level_only=top_level_only)
        _add_command_line(values, notes, channels, conda_specs, packages)
    else:
        values = {
            "python": python or f"{sys.version_info.major}.{sys.version_info.minor}",
            "cuda": cuda or "none",
            "channels": list(channels) if channels else None,
            "conda": list(conda_specs),
            "pip": list(packages),
            "indexes": list(indexes),
        }
    if pylock:
        values["outputs"] = {"pylock": "pylock.toml"}
    if pyproject:
        text = add_intent_to_pyproject(target.read_text(encoding="utf-8"), values, force=force, path=target,
                                       notes=notes)
    else:
        text = new_intent_document(values, notes, header)
    # validate before writing: a bad --cuda or package never reaches the disk
    parse_intent(text, target, validate_matchspec=matchspec_problem)
    write_atomic(target, text)
    where = f"{target.name} [tool.lockguard]" if pyproject else target.name
    summary = f"python {values['python']}, cuda {values['cuda']}, {len(values.get('pip') or [])} pip requirements"
    if values.get("conda"):
        summary += f", {len(values['conda'])} conda specs"
    ui.info(f"wrote {where} ({summary}); next: lockguard resolve")


def _add_command_line(values: dict, notes: dict, channels, conda_specs, packages) -> None:
    """Options given next to --from add to what the files say."""
    for key, items in (("channels", channels), ("conda", conda_specs), ("pip", packages)):
        if not items:
            continue
        current = list(values.get(key) or [])
        current_notes = notes.get(key) if isinstance(notes.get(key), list) else [notes.get(key)] * len(current)
        for item in items:
            if item not in current:
                current.append(item)
                current_notes.append("command line")
        values[key], notes[key] = current, current_notes


def _existing_intent(root: Path) -> Path | None:
    from lockguard.io.project.intent_file import find_intent

    try:
        return find_intent(root)
    except InputError:
        return None
