"""`lockguard constraints show|verify`: the compatibility knowledge, as tables or JSON."""

from __future__ import annotations

import click

from lockguard.cli.common import get_ui, json_option
from lockguard.errors import InputError
from lockguard.model.intent_parse import CONDA_SUBDIRS
from lockguard.model.wording import counted


@click.group()
def constraints() -> None:
    """Show the compatibility knowledge, or verify it against live PyPI."""


@constraints.command()
@click.argument("kind", required=False, type=click.Choice(["torch", "cuda"]))
@click.argument("version", required=False)
@click.option("--platform", default="linux-64", show_default=True, type=click.Choice(CONDA_SUBDIRS),
              help="Conda platform for conda specs and variants.")
@click.option("--python", "python", default=None, help="Python X.Y for the marker evaluation of pins.")
@json_option
@click.pass_context
def show(ctx, kind, version, platform, python, as_json) -> None:
    """Show the knowledge: `show`, `show torch 2.1`, `show cuda 12.1`."""
    from lockguard.knowledge import load_knowledge
    from lockguard.knowledge import show as views

    ui = get_ui(ctx, "constraints show")
    if python is not None:
        from lockguard.model.versions import PythonVersion

        try:
            PythonVersion.parse(python)
        except ValueError:
            raise InputError(f"--python: {python!r} is not a Python version", key="python",
                             hint="write major.minor, e.g. --python 3.11") from None
    knowledge = load_knowledge()
    if kind and not version:
        raise InputError(f"`constraints show {kind}` needs a version", hint=f"e.g. lockguard constraints show {kind} "
                         + ("2.1" if kind == "torch" else "12.1"))
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
@click.option("--index", "index_url", default="https://pypi.org/simple", show_default=True,
              help="Simple index to read torch, cuda-toolkit and CUDA wheels from.")
@json_option
@click.pass_context
def verify(ctx, index_url, as_json) -> int:
    """Re-read the knowledge's facts from the index (range requests, no wheel download) and report
    differences: every torch [[patch]] row from torch's wheel METADATA, every [[cuda-release]] row
    from NVIDIA's cuda-toolkit METADATA, every [[shared-files]] row from the CUDA wheels' RECORD,
    every [[sdist-metadata]] row from the PKG-INFO (or egg-info/requires.txt) of the sdists it covers."""
    from lockguard.io.index.cuda_wheels import read_toolkit_manifests, read_wheel_paths
    from lockguard.io.index.http import HttpClient
    from lockguard.io.index.sdist_pkg_info import read_sdist_facts
    from lockguard.io.index.torch_wheels import live_versions, project_files, read_live_wheels
    from lockguard.knowledge import load_knowledge
    from lockguard.knowledge.verify import compare_patch, missing_releases
    from lockguard.knowledge.verify_cuda import (
        component_differences,
        component_wheels,
        shared_file_differences,
        toolkit_pins,
    )
    from lockguard.knowledge.verify_sdist import sdist_metadata_differences

    ui = get_ui(ctx, "constraints verify")
    knowledge = load_knowledge()
    with HttpClient() as client:
        files = project_files(client, index_url, "torch")
        wanted = {p.version: p.wheel for p in knowledge.patches}
        ui.info(f"reading METADATA of {len(wanted)} torch wheels from {index_url} by range requests...")
        live = read_live_wheels(client, files, wanted)
        ui.info("reading METADATA of every cuda-toolkit release...")
        manifests = {v: toolkit_pins(text) for v, text in read_toolkit_manifests(client, index_url).items()}
        names = sorted(set(component_wheels(knowledge.components)) | set(knowledge.wheel_files.listed))
        ui.info(f"reading the RECORD of {len(names)} CUDA wheels by range requests...")
        paths = read_wheel_paths(client, index_url, names)
        ui.info(f"reading PKG-INFO of the sdists {counted(len(knowledge.sdist_metadata.rows), '[[sdist-metadata]] row')} "
                "cover...")
        sdists = read_sdist_facts(client, index_url, knowledge.sdist_metadata)
        fetched = client.bytes_fetched
    differences = [d for p in knowledge.patches for d in compare_patch(p, live[p.version])]
    differences += missing_releases(knowledge, live_versions(files))
    differences += component_differences(knowledge.components, manifests)
    listed = set(knowledge.wheel_files.listed)
    differences += shared_file_differences(knowledge.wheel_files,
                                           {n: found for n, found in paths.items() if found is not None or n in listed})
    differences += sdist_metadata_differences(knowledge.sdist_metadata, sdists)
    read = sum(1 for found in paths.values() if found is not None)
    sdists_read = sum(len(found or ()) for found in sdists.values())
    if as_json:
        ui.emit_json({"index": index_url, "checked": len(wanted), "cuda_toolkit_releases": len(manifests),
                      "wheels_read": read, "sdists_read": sdists_read, "bytes_fetched": fetched,
                      "differences": [d.to_dict() for d in differences]}, ok=not differences,
                     exit_code=1 if differences else 0)
    else:
        ui.info(f"checked {len(wanted)} patch rows, {len(manifests)} cuda-toolkit releases, the RECORD of {read} "
                f"CUDA wheels and the metadata of {counted(sdists_read, 'sdist')}; fetched {fetched / 1e6:.1f} MB")
        if differences:
            ui.table(["what", "field", "knowledge", "live", "row"],
                     [(d.version, d.field, d.knowledge, d.live, d.origin or "") for d in differences],
                     title=f"{counted(len(differences), 'difference')} between constraints/ and {index_url}")
        else:
            ui.out("the torch rows, the CUDA components, the shared files and the sdist metadata match the index")
    return 1 if differences else 0
