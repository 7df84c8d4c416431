"""`lockguard constraints show|verify`: the compatibility knowledge, as tables or JSON."""

from __future__ import annotations

import click

from lockguard.app.constraints_session import knowledge as load_knowledge
from lockguard.app.constraints_session import verify as verify_knowledge
from lockguard.cli import constraints_views as views
from lockguard.cli.common import get_ui, json_option
from lockguard.errors import InputError
from lockguard.model.intent_parse import CONDA_SUBDIRS
from lockguard.model.versions import PythonVersion
from lockguard.model.wording import counted


@click.group()
def constraints() -> None:
    """Show the compatibility knowledge, or verify it against live PyPI."""


@constraints.command()
@click.argument("kind", required=False, type=click.Choice(["torch", "cuda"]))
@click.argument("version", required=False)
@click.option(
    "--platform",
    default="linux-64",
    show_default=True,
    type=click.Choice(CONDA_SUBDIRS),
    help="Conda platform for conda specs and variants.",
)
@click.option(
    "--python", "python", default=None, help="Python X.Y for the marker evaluation of pins."
)
@json_option
@click.pass_context
def show(ctx, kind, version, platform, python, as_json) -> None:
    """Show the knowledge: `show`, `show torch 2.1`, `show cuda 12.1`."""
    ui = get_ui(ctx, "constraints show")
    if python is not None:
        try:
            PythonVersion.parse(python)
        except ValueError:
            raise InputError(
                f"--python: {python!r} is not a Python version",
                key="python",
                hint="write major.minor, e.g. --python 3.11",
            ) from None
    knowledge = load_knowledge()
    if kind and not version:
        raise InputError(
            f"`constraints show {kind}` needs a version",
            hint=f"e.g. lockguard constraints show {kind} "
            + ("2.1" if kind == "torch" else "12.1"),
        )
    if kind == "torch":
        view = views.torch_view(knowledge, version, platform, python)
    elif kind == "cuda":
        view = views.cuda_view(knowledge, version, platform)
    else:
        view = views.overview(knowledge)
    if as_json:
        ui.emit_json(view.data)
        return
    for section in view.sections:
        ui.table(section.columns, section.rows, title=section.title)
        ui.out()


@constraints.command()
@click.option(
    "--index",
    "index_url",
    default="https://pypi.org/simple",
    show_default=True,
    help="Simple index to read torch, cuda-toolkit and CUDA wheels from.",
)
@json_option
@click.pass_context
def verify(ctx, index_url, as_json) -> int:
    """Re-read the knowledge's facts from the index (range requests, no wheel download) and report
    differences: every torch [[patch]] row from torch's wheel METADATA, every [[cuda-release]] row
    from NVIDIA's cuda-toolkit METADATA, every [[shared-files]] row from the CUDA wheels' RECORD,
    every [[sdist-metadata]] row from the PKG-INFO (or egg-info/requires.txt) of the sdists it
    covers."""
    ui = get_ui(ctx, "constraints verify")
    found = verify_knowledge(index_url, ui.info)
    differences, read, fetched = found.differences, found.wheels_read, found.bytes_fetched
    if as_json:
        ui.emit_json(
            {
                "index": index_url,
                "checked": found.checked,
                "cuda_toolkit_releases": found.toolkit_releases,
                "wheels_read": read,
                "sdists_read": found.sdists_read,
                "bytes_fetched": fetched,
                "differences": [d.to_dict() for d in differences],
            },
            ok=not differences,
            exit_code=1 if differences else 0,
        )
    else:
        ui.info(
            f"checked {found.checked} patch rows, {found.toolkit_releases} cuda-toolkit releases, "
            f"the RECORD of {read} CUDA wheels and the metadata of "
            f"{counted(found.sdists_read, 'sdist')}; "
            f"fetched {fetched / 1e6:.1f} MB"
        )
        if differences:
            ui.table(
                ["what", "field", "knowledge", "live", "row"],
                [(d.version, d.field, d.knowledge, d.live, d.origin or "") for d in differences],
                title=f"{counted(len(differences), 'difference')} between constraints/ and "
                f"{index_url}",
            )
        else:
            ui.out(
                "the torch rows, the CUDA components, the shared files and the sdist metadata "
                "match the index"
            )
    return 1 if differences else 0
