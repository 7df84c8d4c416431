"""`lockguard constraints`' session: the knowledge loaded for `show`, and for `verify` its facts
read again from the index (wheel METADATA and RECORD by range requests, no wheel download) and
compared with the rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lockguard.io.index.cuda_wheels import read_toolkit_manifests, read_wheel_paths
from lockguard.io.index.http import HttpClient
from lockguard.io.index.sdist_pkg_info import read_sdist_facts
from lockguard.io.index.torch_wheels import live_versions, project_files, read_live_wheels
from lockguard.io.knowledge.files import load_knowledge
from lockguard.knowledge.tables import Knowledge
from lockguard.knowledge.verify import Difference, compare_patch, missing_releases
from lockguard.knowledge.verify_cuda import (
    component_differences,
    component_wheels,
    shared_file_differences,
    toolkit_pins,
)
from lockguard.knowledge.verify_sdist import sdist_metadata_differences
from lockguard.model.wording import counted


def knowledge() -> Knowledge:
    return load_knowledge()


@dataclass(frozen=True, slots=True, kw_only=True)
class Verified:
    checked: int  # torch patch rows
    toolkit_releases: int  # cuda-toolkit releases read
    wheels_read: int  # CUDA wheels whose RECORD was read
    sdists_read: int  # sdists whose PKG-INFO (or requires.txt) was read for [[sdist-metadata]]
    bytes_fetched: int
    differences: tuple[Difference, ...]


def verify(index_url: str, say: Callable[[str], None]) -> Verified:
    """Every torch [[patch]] row against torch's wheel METADATA, every [[cuda-release]] row against
    NVIDIA's cuda-toolkit METADATA, every [[shared-files]] row against the CUDA wheels' RECORD,
    every [[sdist-metadata]] row against the PKG-INFO (or egg-info/requires.txt) of the sdists it
    covers."""
    known = load_knowledge()
    with HttpClient() as client:
        files = project_files(client, index_url, "torch")
        wanted = {p.version: p.wheel for p in known.patches}
        say(f"reading METADATA of {len(wanted)} torch wheels from {index_url} by range requests...")
        live = read_live_wheels(client, files, wanted)
        say("reading METADATA of every cuda-toolkit release...")
        manifests = {
            v: toolkit_pins(text) for v, text in read_toolkit_manifests(client, index_url).items()
        }
        names = sorted(set(component_wheels(known.components)) | set(known.wheel_files.listed))
        say(f"reading the RECORD of {len(names)} CUDA wheels by range requests...")
        paths = read_wheel_paths(client, index_url, names)
        say(
            "reading PKG-INFO of the sdists "
            f"{counted(len(known.sdist_metadata.rows), '[[sdist-metadata]] row')} "
            "cover..."
        )
        sdists = read_sdist_facts(client, index_url, known.sdist_metadata)
        fetched = client.bytes_fetched
    differences = [d for p in known.patches for d in compare_patch(p, live[p.version])]
    differences += missing_releases(known, live_versions(files))
    differences += component_differences(known.components, manifests)
    listed = set(known.wheel_files.listed)
    differences += shared_file_differences(
        known.wheel_files,
        {n: found for n, found in paths.items() if found is not None or n in listed},
    )
    differences += sdist_metadata_differences(known.sdist_metadata, sdists)
    read = sum(1 for found in paths.values() if found is not None)
    sdists_read = sum(len(found or ()) for found in sdists.values())
    return Verified(
        checked=len(wanted),
        toolkit_releases=len(manifests),
        wheels_read=read,
        sdists_read=sdists_read,
        bytes_fetched=fetched,
        differences=tuple(differences),
    )
