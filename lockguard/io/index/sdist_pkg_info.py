"""Read what `constraints verify` checks constraints/sdist_metadata.toml against: the PKG-INFO of
every sdist a row covers, and for some the egg-info/requires.txt. Never a build.

PKG-INFO is among the first members of an sdist (setuptools writes it right after the top folder),
so its first 32 KiB, asked for by a range request and gunzipped as far as they go, hold it (16 KiB
for every causal-conv1d, flash-attn and mamba-ssm sdist on PyPI); when they do not, or for a zip
sdist, the whole file is read. requires.txt lies near the end: it needs the whole file.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

from packaging.utils import InvalidSdistFilename, parse_sdist_filename

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient
from lockguard.io.index.torch_wheels import project_files
from lockguard.io.index.workers import import_worker_modules
from lockguard.knowledge.sdist_metadata import SdistMetadata
from lockguard.knowledge.verify_sdist import (
    SdistFacts,
    pkg_info_facts,
    requires_txt_facts,
    requires_txt_wanted,
)
from lockguard.model.dist import DistFile

PREFIX_BYTES = 32 * 1024
MAX_SDIST = 256 * 1024**2  # the largest sdist lockguard reads (as for a resolve)
WORKERS = 8


def read_sdist_facts(
    client: HttpClient, index_url: str, table: SdistMetadata
) -> dict[str, list[SdistFacts] | None]:
    """project name -> what each of its sdists that a row covers says (None: not on the index)."""
    client.prepare()
    import_worker_modules()
    sdists = {name: _sdists(client, index_url, name) for name in table.names}
    wanted = {
        file.filename: (name, version, file)
        for name, found in sdists.items()
        for version, file in (found or {}).items()
        if table.row_for(name, version) is not None
    }

    def from_pkg_info(filename: str) -> tuple[str, SdistFacts]:
        name, version, file = wanted[filename]
        return name, pkg_info_facts(version, filename, read_pkg_info(client, file))

    def from_requires_txt(facts: SdistFacts) -> SdistFacts:
        text = read_requires_txt(client, wanted[facts.filename][2])
        return facts if text is None else requires_txt_facts(facts, text)

    out: dict[str, list[SdistFacts] | None] = {
        name: None if found is None else [] for name, found in sdists.items()
    }
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for name, facts in pool.map(from_pkg_info, sorted(wanted)):
            out[name] = [*(out[name] or ()), facts]
        better = {
            f.filename: f for f in pool.map(from_requires_txt, requires_txt_wanted(table, out))
        }
    return {
        name: None if found is None else [better.get(f.filename, f) for f in found]
        for name, found in out.items()
    }


def read_pkg_info(client: HttpClient, file: DistFile) -> bytes:
    """The sdist's top-level PKG-INFO (b"" when it has none)."""
    if file.filename.endswith(".tar.gz"):
        answer = client.get(
            file.url, headers={"Range": f"bytes=0-{PREFIX_BYTES - 1}"}, max_bytes=MAX_SDIST
        )
        if answer.status == 206:
            found = _pkg_info_in_prefix(answer.content)
            if found is not None:
                return found
        elif answer.status == 200:  # the server ignored Range: this is the whole file
            return _member(file, answer.content, _is_pkg_info) or b""
    return _member(file, _whole(client, file), _is_pkg_info) or b""


def read_requires_txt(client: HttpClient, file: DistFile) -> str | None:
    """The text of `<top>/<name>.egg-info/requires.txt` in the sdist; None: it has none."""
    found = _member(file, _whole(client, file), _is_requires_txt)
    return None if found is None else found.decode("utf-8", errors="replace")


def _is_pkg_info(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and parts[1] == "PKG-INFO"


def _is_requires_txt(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 3 and parts[1].endswith(".egg-info") and parts[2] == "requires.txt"


def _member(file: DistFile, archive: bytes, wanted) -> bytes | None:
    """The first member of the sdist `archive` whose name `wanted` accepts."""
    try:
        if file.filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
                names = [n for n in zipped.namelist() if wanted(n)]
                return zipped.read(names[0]) if names else None
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tarred:
            for member in tarred:
                if member.isfile() and wanted(member.name):
                    extracted = tarred.extractfile(member)
                    return extracted.read() if extracted is not None else None
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise SourceUnreachable(
            f"{file.filename} cannot be unpacked ({exc})", url=file.url
        ) from None
    return None


def _pkg_info_in_prefix(prefix: bytes) -> bytes | None:
    """PKG-INFO from the first bytes of a .tar.gz, if they hold all of it; None: read more."""
    try:
        raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(prefix)
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tarred:
            for member in tarred:
                if member.isfile() and _is_pkg_info(member.name):
                    extracted = tarred.extractfile(member)
                    return extracted.read() if extracted is not None else None
    except (zlib.error, tarfile.TarError, OSError, EOFError, ValueError):
        return None  # cut short before PKG-INFO ended (or not a gzipped tar)
    return None


def _whole(client: HttpClient, file: DistFile) -> bytes:
    answer = client.get(file.url, max_bytes=MAX_SDIST)
    if answer.status != 200:
        raise SourceUnreachable(f"{file.url}: HTTP {answer.status}", url=file.url)
    return answer.content


def _sdists(client: HttpClient, index_url: str, name: str) -> dict[str, DistFile] | None:
    """version -> its sdist, yanked ones too (a row states what they say as well); None: the index
    has no such project."""
    try:
        files = project_files(client, index_url, name)
    except SourceUnreachable as exc:
        if "HTTP 404" in exc.message:
            return None
        raise
    out: dict[str, DistFile] = {}
    for file in files:
        if not file.filename.endswith((".tar.gz", ".zip")):
            continue
        try:
            _name, version = parse_sdist_filename(file.filename)
        except InvalidSdistFilename:
            continue
        out.setdefault(str(version), file)
    return out
