"""`lockguard init`: write the intent, to lockguard.toml or [tool.lockguard] in pyproject.toml; from
options, or adopted from existing files (`--from`) or a working environment (`--from-env`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lockguard.app.init_from import adopted_values
from lockguard.app.init_intent import (
    environment_name,
    existing_intent,
    pyproject_text,
    validate_intent,
    write_intent,
)
from lockguard.cli.common import get_ui
from lockguard.errors import InputError
from lockguard.model.intent_write import add_intent_to_pyproject, new_intent_document
from lockguard.model.wording import counted


@click.command()
@click.option(
    "--python",
    "python",
    default=None,
    help="Python X.Y (default: the files' or the running Python).",
)
@click.option(
    "--cuda",
    default=None,
    help='CUDA X.Y, "none" (CPU) or "auto" (from the driver). Default: the files\' or none.',
)
@click.option(
    "--channel", "channels", multiple=True, help="Conda channel (repeatable; default conda-forge)."
)
@click.option("--conda", "conda_specs", multiple=True, help="Extra conda spec (repeatable).")
@click.option(
    "--index", "indexes", multiple=True, help="Package index URL for pip packages (repeatable)."
)
@click.option(
    "--from",
    "from_files",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Adopt an existing requirements.txt/.in, pyproject.toml, environment.yml or Dockerfile "
    "(repeatable).",
)
@click.option(
    "--from-env",
    "from_env",
    type=click.Path(path_type=Path),
    default=None,
    help="Adopt a working environment: a venv or conda prefix, or its python executable.",
)
@click.option(
    "--top-level-only", is_flag=True, help="With --from-env: pin only what nothing else requires."
)
@click.option("--pylock", is_flag=True, help="Also write pylock.toml (PEP 751) on resolve.")
@click.option("--pyproject", is_flag=True, help="Write [tool.lockguard] into pyproject.toml.")
@click.option("--force", is_flag=True, help="Replace an existing intent.")
@click.argument("packages", nargs=-1)
@click.pass_context
def init(
    ctx,
    python,
    cuda,
    channels,
    conda_specs,
    indexes,
    from_files,
    from_env,
    top_level_only,
    pylock,
    pyproject,
    force,
    packages,
) -> None:
    """Write the intent: what to lock (Python, CUDA, pip and conda packages).

    PACKAGES are pip requirements, e.g.
    `lockguard init --python 3.11 --cuda 12.1 "torch==2.1.*" deepspeed`. With --from, the values
    come from the files (`lockguard init --from requirements.txt --from Dockerfile`); files that
    disagree are refused until --python/--cuda decide.
    """
    ui = get_ui(ctx, "init")
    root = Path.cwd()
    target = root / ("pyproject.toml" if pyproject else "lockguard.toml")
    existing = existing_intent(root)
    if existing and not force:
        where = (
            f"{existing} [tool.lockguard]" if existing.name == "pyproject.toml" else str(existing)
        )
        raise InputError(
            f"an intent already exists: {where}",
            file=str(existing),
            hint="pass --force to replace it, or edit it by hand",
        )
    if pyproject and not target.is_file():
        raise InputError(
            f"{target} does not exist",
            file=str(target),
            hint="run `lockguard init` without --pyproject to write lockguard.toml",
        )
    if top_level_only and from_env is None:
        raise InputError(
            "--top-level-only goes with --from-env",
            hint="add --from-env PREFIX, or drop --top-level-only",
        )
    notes: dict = {}
    header: list[str] = []
    if from_files or from_env is not None:
        values, notes, header = adopted_values(
            ui,
            files=from_files,
            env=from_env,
            python=python,
            cuda=cuda,
            indexes=indexes,
            top_level_only=top_level_only,
        )
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
    if not values.get("name"):
        values["name"] = environment_name(root)
    if pylock:
        values["outputs"] = {"pylock": "pylock.toml"}
    if pyproject:
        text = add_intent_to_pyproject(
            pyproject_text(target), values, force=force, path=target, notes=notes
        )
    else:
        text = new_intent_document(values, notes, header)
    # validate before writing: a bad --cuda or package never reaches the disk
    try:
        validate_intent(text, target)
    except InputError as exc:
        raise _blame_the_source(exc, notes, written=target) from None
    write_intent(target, text)
    where = f"{target.name} [tool.lockguard]" if pyproject else target.name
    summary = (
        f"python {values['python']}, cuda {values['cuda']}, "
        f"{counted(len(values.get('pip') or []), 'pip requirement')}"
    )
    if values.get("conda"):
        summary += f", {counted(len(values['conda']), 'conda spec')}"
    ui.info(f"wrote {where} ({summary}); next: lockguard resolve")


# the option (or argument) that gave each intent key its value
_OPTIONS = {
    "python": "--python",
    "cuda": "--cuda",
    "channels": "--channel",
    "conda": "--conda",
    "pip": "PACKAGES",
    "indexes": "--index",
}


def _blame_the_source(exc: InputError, notes: dict, *, written: Path) -> InputError:
    """An error in the intent about to be written names where the bad value came from (the option,
    or the adopted file and line), never a line of a file that was not written."""
    key = (exc.key or "").split(".")[0]
    source = notes.get(key)
    if isinstance(source, list):
        source = ", ".join(dict.fromkeys(s for s in source if s)) or None
    source = source if source and source != "command line" else _OPTIONS.get(key)
    if not source:
        return exc
    message = exc.message
    for prefix in (f"{exc.file}:{exc.line}: ", f"{exc.file}: "):
        if exc.file and message.startswith(prefix):
            message = message[len(prefix) :]
            break
    message = message.removeprefix(f"{exc.key}: ")
    hint = (
        f"{exc.hint}; nothing was written to {written.name}"
        if exc.hint
        else f"nothing was written to {written.name}"
    )
    return InputError(f"{source}: {message}", key=exc.key, hint=hint)


def _add_command_line(values: dict, notes: dict, channels, conda_specs, packages) -> None:
    """Options given next to --from add to what the files say."""
    for key, items in (("channels", channels), ("conda", conda_specs), ("pip", packages)):
        if not items:
            continue
        current = list(values.get(key) or [])
        noted = notes.get(key)
        current_notes = noted if isinstance(noted, list) else [noted] * len(current)
        for item in items:
            if item not in current:
                current.append(item)
                current_notes.append("command line")
        values[key], notes[key] = current, current_notes
