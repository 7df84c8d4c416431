"""`lockguard init`: write the intent, to lockguard.toml or [tool.lockguard] in pyproject.toml; from
options, or adopted from existing files (`--from`) or a working environment (`--from-env`)."""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.app.init_session import InitOutcome
from lockguard.app.init_session import init as init_intent
from lockguard.cli.common import get_ui
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
@click.option(
    "--profile",
    default=None,
    metavar="NAME",
    help="Add [profiles.NAME] with these options to the intent (one project, many machines).",
)
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
    profile,
    packages,
) -> None:
    """Write the intent: what to lock (Python, CUDA, pip and conda packages).

    PACKAGES are pip requirements, e.g.
    `lockguard init --python 3.11 --cuda 12.1 "torch==2.1.*" deepspeed`. With --from, the values
    come from the files (`lockguard init --from requirements.txt --from Dockerfile`); files that
    disagree are refused until --python/--cuda decide.
    """
    ui = get_ui(ctx, "init")
    outcome = init_intent(
        ui,
        root=Path.cwd(),
        python=python,
        cuda=cuda,
        channels=channels,
        conda_specs=conda_specs,
        indexes=indexes,
        from_files=from_files,
        from_env=from_env,
        top_level_only=top_level_only,
        pylock=pylock,
        pyproject=pyproject,
        force=force,
        packages=packages,
        profile=profile,
    )
    ui.info(_written(outcome))


def _written(outcome: InitOutcome) -> str:
    """The one line init prints: the file written, what the intent holds, what comes next."""
    where = outcome.target.name + (" [tool.lockguard]" if outcome.in_pyproject else "")
    summary = (
        f"python {outcome.python}, cuda {outcome.cuda}, {counted(outcome.pip, 'pip requirement')}"
    )
    if outcome.conda:
        summary += f", {counted(outcome.conda, 'conda spec')}"
    then = "next: lockguard resolve"
    if outcome.unreachable:  # the intent says so too, above the key
        then += (
            f"; {outcome.unreachable}, so the intent says conda-from-knowledge = true (resolve "
            "pins the conda side from lockguard's knowledge, no solve): delete that line once the "
            "channel can be reached"
        )
    elif outcome.channels:  # rattler solves the conda side there; without them resolve exits 4
        then += (
            f" (it solves the conda side on {', '.join(outcome.channels)}; where that cannot be "
            "reached: lockguard resolve --conda-from-knowledge)"
        )
    return f"wrote {where} ({summary}); {then}"
