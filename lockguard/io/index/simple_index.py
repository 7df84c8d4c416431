"""Parse PEP 691 (JSON) and PEP 503 (HTML) simple-repository project pages into file records."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlparse

from lockguard.model.dist import DistFile

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"


def parse_project_page(body: bytes, content_type: str, page_url: str, keep=None) -> list[DistFile]:
    """`keep(filename)` drops files before they become records (files no target could use)."""
    return [row_to_file(r) for r in project_rows(body, content_type, page_url, keep)]


def project_rows(body: bytes, content_type: str, page_url: str, keep=None) -> list[tuple]:
    """The page's files as plain tuples (see row_to_file): cheap to build, marshal and filter."""
    if "json" in content_type:
        return json_rows(body, page_url, keep)
    files = parse_html_page(body.decode("utf-8", errors="replace"), page_url)
    return [file_to_row(f) for f in files if keep is None or keep(f.filename)]


def json_rows(body: bytes, page_url: str, keep=None) -> list[tuple]:
    data = json.loads(body)
    rows = []
    for item in data.get("files", []):
        if keep is not None and not keep(item["filename"]):
            continue
        url = item["url"]
        if not url.startswith(("https://", "http://")):
            url = urljoin(page_url, url)  # PyPI's URLs are absolute: skip the costly join
        metadata = item.get("core-metadata", item.get("data-dist-info-metadata", False)) or False
        rows.append((item["filename"], url, item.get("hashes") or {}, item.get("requires-python") or None,
                     bool(item.get("yanked")), metadata, item.get("upload-time"), item.get("size")))
    return rows


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[tuple[dict[str, str | None], str]] = []
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._current = dict(attrs)
            self._text = []

    def handle_data(self, data):
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._current is not None:
            self.anchors.append((self._current, "".join(self._text).strip()))
            self._current = None


def parse_html_page(text: str, page_url: str) -> list[DistFile]:
    parser = _Anchors()
    parser.feed(text)
    base = page_url
    match = re.search(r'<base\s+href="([^"]+)"', text, re.I)
    if match:
        base = urljoin(page_url, match.group(1))
    files = []
    for attrs, label in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url = urljoin(base, href)
        path, _, fragment = url.partition("#")
        filename = label or unquote(urlparse(path).path.rsplit("/", 1)[-1])
        hashes = {}
        if "=" in fragment:
            algo, _, digest = fragment.partition("=")
            hashes[algo] = digest
        metadata_attr = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
        metadata: bool | dict = False
        if metadata_attr is not None:
            if metadata_attr and "=" in metadata_attr:
                algo, _, digest = metadata_attr.partition("=")
                metadata = {algo: digest}
            else:
                metadata = metadata_attr != "false"
        files.append(
            DistFile(
                filename=filename,
                url=path,
                hashes=hashes,
                requires_python=attrs.get("data-requires-python") or None,
                yanked="data-yanked" in attrs,
                metadata=metadata,
            )
        )
    return files


def file_to_row(file: DistFile) -> tuple:
    """A marshal-friendly tuple of a file record (for the cache's page digests)."""
    metadata = file.metadata if isinstance(file.metadata, (bool, dict)) else bool(file.metadata)
    return (file.filename, file.url, dict(file.hashes), file.requires_python, file.yanked, metadata,
            file.upload_time, file.size)


def row_to_file(row: tuple) -> DistFile:
    return DistFile(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])
