"""Read torch wheel facts from an index: the file list, then METADATA by range requests."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from email.parser import HeaderParser

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient
from lockguard.io.index.lazy_wheel import read_wheel_metadata
from lockguard.io.index.simple_index import JSON_ACCEPT, parse_project_page
from lockguard.io.index.workers import import_worker_modules
from lockguard.knowledge.verify import LiveWheel
from lockguard.model.dist import DistFile


def project_files(client: HttpClient, index_url: str, name: str) -> list[DistFile]:
    url = f"{index_url.rstrip('/')}/{name}/"
    answer = client.get(url, headers={"Accept": JSON_ACCEPT})
    if answer.status != 200:
        raise SourceUnreachable(f"{url}: HTTP {answer.status}", url=url)
    return parse_project_page(answer.content, answer.headers.get("content-type", ""), answer.url)


def read_live_wheels(
    client: HttpClient, files: list[DistFile], wanted: dict[str, str], workers: int = 8
) -> dict[str, LiveWheel]:
    """{version: LiveWheel} for each {version: wheel filename} in `wanted`."""
    by_name = {f.filename: f for f in files}

    def one(item: tuple[str, str]) -> tuple[str, LiveWheel]:
        version, filename = item
        found = by_name.get(filename)
        if found is None:
            return version, LiveWheel(version, None)
        raw, _refused = read_wheel_metadata(client, found.url)
        message = HeaderParser().parsestr(raw.decode("utf-8", errors="replace"))
        return version, LiveWheel(
            version=version,
            wheel=filename,
            requires_python=message.get("Requires-Python"),
            requires=tuple(message.get_all("Requires-Dist") or ()),
        )

    client.prepare()
    import_worker_modules()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, sorted(wanted.items())))


def live_versions(files: list[DistFile]) -> set[str]:
    versions = set()
    for item in files:
        parts = item.filename.split("-")
        if len(parts) >= 2 and parts[0] == "torch":
            versions.add(parts[1])
    return versions
