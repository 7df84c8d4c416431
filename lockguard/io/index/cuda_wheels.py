"""Read what `constraints verify` checks the CUDA tables against: every cuda-toolkit release's
METADATA (PEP 658 file or range requests) and the RECORD of the newest linux x86_64 wheel of each
CUDA wheel (range requests, as METADATA is read: never a whole wheel)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient
from lockguard.io.index.lazy_wheel import read_wheel_metadata, read_wheel_record
from lockguard.io.index.torch_wheels import project_files
from lockguard.io.index.workers import import_worker_modules
from lockguard.model.dist import DistFile

WORKERS = 8


def read_toolkit_manifests(
    client: HttpClient, index_url: str, name: str = "cuda-toolkit"
) -> dict[str, str]:
    """cuda-toolkit version -> its METADATA text, for every final release with a wheel."""
    newest = _wheels_by_version(_files_or_none(client, index_url, name) or [])
    wanted = {str(v): f for v, f in newest.items() if not v.is_prerelease and not v.is_devrelease}
    client.prepare()
    import_worker_modules()

    def one(item: tuple[str, DistFile]) -> tuple[str, str]:
        version, file = item
        return version, _metadata(client, file).decode("utf-8", errors="replace")

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(pool.map(one, sorted(wanted.items())))


def read_wheel_paths(
    client: HttpClient, index_url: str, names: Iterable[str]
) -> dict[str, tuple[str, ...] | None]:
    """wheel name -> the paths the newest linux x86_64 wheel of it installs (None: no such
    wheel)."""
    client.prepare()
    import_worker_modules()

    def one(name: str) -> tuple[str, tuple[str, ...] | None]:
        newest = _wheels_by_version(_files_or_none(client, index_url, name) or [])
        finals = [v for v in newest if not v.is_prerelease and not v.is_devrelease]
        if not finals:
            return name, None
        return name, read_wheel_record(client, newest[max(finals)].url)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(pool.map(one, sorted(set(names))))


def _files_or_none(client: HttpClient, index_url: str, name: str) -> list[DistFile] | None:
    try:
        return project_files(client, index_url, name)
    except SourceUnreachable as exc:
        if "HTTP 404" in exc.message:
            return None
        raise


def _wheels_by_version(files: list[DistFile]) -> dict[Version, DistFile]:
    """version -> one linux x86_64 (or any-platform) wheel of it, the plainest tag first."""
    out: dict[Version, DistFile] = {}
    for file in files:
        if not file.filename.endswith(".whl") or file.yanked:
            continue
        try:
            _name, version, _build, tags = parse_wheel_filename(file.filename)
        except InvalidWheelFilename:
            continue
        platforms = {t.platform for t in tags}
        if not any(p == "any" or (p.endswith("x86_64") and "linux" in p) for p in platforms):
            continue
        out.setdefault(version, file)
    return out


def _metadata(client: HttpClient, file: DistFile) -> bytes:
    # the advertised .metadata only (io/index/metadata.py says why), and only when its sha256
    # holds; else the wheel's own
    if file.metadata:
        answer = client.get(file.url + ".metadata")
        digest = file.metadata.get("sha256") if isinstance(file.metadata, dict) else None
        if answer.status == 200 and (
            not digest or hashlib.sha256(answer.content).hexdigest() == str(digest).lower()
        ):
            return answer.content
    raw, _refused = read_wheel_metadata(client, file.url)
    return raw
