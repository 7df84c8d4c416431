"""Parse PEP 691 (JSON) and PEP 503 (HTML) simple-repository project pages into file records."""

from __future__ import annotations

import codecs
import json
import re
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlparse

from lockguard.errors import SourceUnreachable
from lockguard.io.msgspec_adapter import UNSET, page_files
from lockguard.model.dist import DistFile

JSON_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.1"
)


def parse_project_page(body: bytes, content_type: str, page_url: str, keep=None) -> list[DistFile]:
    """`keep(filename)` drops files before they become records (files no target could use)."""
    return [row_to_file(r) for r in project_rows(body, content_type, page_url, keep)]


_CHUNK = 1 << 20  # bytes of a page decoded and parsed at a time
_HEAD = 65536  # characters at the start that must hold a "<" for the page to be HTML
_TAIL = 4096  # characters at the end where the closing tags are looked for


class BadPage(SourceUnreachable):
    """An index page that is not a PEP 691/503 project page: the index is unusable for that name."""


def _bad(page_url: str, what: str) -> BadPage:
    return BadPage(
        f"the index page {page_url} is not a valid simple-repository page: {what}",
        url=page_url,
        hint="the index serves a broken page: check the index URL in the intent, "
        "or use another mirror",
    )


def project_rows(body: bytes, content_type: str, page_url: str, keep=None) -> list[tuple]:
    """The page's files as plain tuples (see row_to_file): cheap to build, marshal and filter.
    A page that is not a project page raises BadPage (it is never read as 'no files')."""
    if "json" in content_type:
        return json_rows(body, page_url, keep)
    return html_rows(body, page_url, keep)


def html_rows(body: bytes, page_url: str, keep=None) -> list[tuple]:
    """A PEP 503 page, decoded and parsed a megabyte at a time: each link becomes a row (or is
    dropped by `keep`) as soon as it is read, so a 100 MB page never exists as one string, nor
    its anchors as dicts, next to its bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    parser = _Anchors(page_url, keep)
    head = tail = ""
    view = memoryview(body)
    for start in range(0, max(len(body), 1), _CHUNK):
        try:
            text = decoder.decode(view[start : start + _CHUNK], final=start + _CHUNK >= len(body))
        except UnicodeDecodeError:
            raise _bad(page_url, "it is neither UTF-8 HTML nor JSON") from None
        if len(head) < _HEAD:
            head += text[: _HEAD - len(head)]
            if len(head) >= _HEAD and "<" not in head:
                break  # judged below
        parser.feed(text)
        tail = (tail + text)[-_TAIL:]
    if head.strip() and "<" not in head:
        raise _bad(page_url, f"it is not HTML (it starts with {head.strip()[:40]!r})")
    if _cut_short(head, tail, parser):
        # never "no files": the rest of the list (maybe every file) was lost on the way
        raise _bad(page_url, "it ends before its end (cut short in transfer?)")
    return parser.rows


def json_rows(body: bytes, page_url: str, keep=None) -> list[tuple]:
    files = page_files(body)
    if files is not None:
        rows = _typed_rows(files, page_url, keep)
        if rows is not None:
            return rows
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise _bad(page_url, f"invalid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files", []), list):
        raise _bad(page_url, "PEP 691 wants an object whose 'files' is a list")
    rows = []
    for number, item in enumerate(data.get("files", []), start=1):
        problem = _file_problem(item)
        if problem:
            raise _bad(page_url, f"file #{number}: {problem}")
        if keep is not None and not keep(item["filename"]):
            continue
        url = item["url"]
        if not url.startswith(("https://", "http://")):
            url = urljoin(page_url, url)  # PyPI's URLs are absolute: skip the costly join
        metadata = item.get("core-metadata", item.get("data-dist-info-metadata", False)) or False
        rows.append(
            (
                item["filename"],
                url,
                item.get("hashes") or {},
                item.get("requires-python") or None,
                _yanked(item.get("yanked")),
                metadata,
                item.get("upload-time"),
                item.get("size"),
            )
        )
    return rows


def _typed_rows(files: list, page_url: str, keep=None) -> list[tuple] | None:
    """json_rows for entries msgspec decoded and type-checked (io/msgspec_adapter.py): the same
    rows, and the checks types cannot express made on every entry as json_rows makes them. None
    when an entry fails one: json_rows then reads the page again and names the problem."""
    rows = []
    sha256 = _SHA256.fullmatch
    for item in files:
        filename, url, hashes = item.filename, item.url, item.hashes
        if not filename or not url:
            return None
        digest = hashes.get("sha256") if hashes else None
        if digest is not None and not sha256(digest):
            return None
        metadata = item.core_metadata
        if (
            isinstance(metadata, dict)
            and (digest := metadata.get("sha256")) is not None
            and not sha256(digest)
        ):
            return None
        if keep is not None and not keep(filename):
            continue
        if metadata is UNSET:
            metadata = False if item.dist_info_metadata is UNSET else item.dist_info_metadata
        if not url.startswith(("https://", "http://")):
            url = urljoin(page_url, url)
        rows.append(
            (
                filename,
                url,
                hashes or {},
                item.requires_python or None,
                _yanked(item.yanked),
                metadata or False,
                item.upload_time,
                item.size,
            )
        )
    return rows


def _yanked(value) -> bool | str:
    """PEP 691's `yanked`: false, true, or the reason (a non-empty string, kept for messages)."""
    return value if isinstance(value, str) and value else bool(value)


def _file_problem(item) -> str | None:
    """What is wrong with one PEP 691 file entry (None: nothing)."""
    if not isinstance(item, dict):
        return f"an entry must be an object, not {type(item).__name__}"
    for key in ("filename", "url"):
        if not isinstance(item.get(key), str) or not item.get(key):
            return f"'{key}' must be a non-empty string"
    hashes = item.get("hashes", {})
    if hashes is not None and (
        not isinstance(hashes, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in hashes.items())
    ):
        return f"'hashes' of {item['filename']} must map algorithm names to hex digests"
    for key, kinds in (
        ("requires-python", (str, type(None))),
        ("upload-time", (str, type(None))),
        ("size", (int, type(None))),
        ("yanked", (bool, str, type(None))),
        ("core-metadata", (bool, dict, type(None))),
        ("data-dist-info-metadata", (bool, dict, type(None))),
    ):
        if key in item and not isinstance(item[key], kinds):
            return f"'{key}' of {item['filename']} has the wrong type ({type(item[key]).__name__})"
    for key in ("core-metadata", "data-dist-info-metadata"):
        if isinstance(item.get(key), dict) and not all(
            isinstance(v, str) for v in item[key].values()
        ):
            return f"'{key}' of {item['filename']} must map algorithm names to hex digests"
    for where, mapping in (("hashes", hashes), ("core-metadata", item.get("core-metadata"))):
        digest = mapping.get("sha256") if isinstance(mapping, dict) else None
        if digest is not None and not _SHA256.fullmatch(digest):
            return f"the sha256 in '{where}' of {item['filename']} is not 64 hex digits"
    return None


_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class _Anchors(HTMLParser):
    """The page's links as file rows, each made when its </a> is read; `keep(filename)` drops
    the files no target could use before they become rows."""

    def __init__(self, page_url: str, keep=None) -> None:
        super().__init__(convert_charrefs=True)
        self.page_url = page_url
        self.base = page_url
        self.keep = keep
        self.rows: list[tuple] = []
        self._current: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._current = dict(attrs)
            self._text = []
        elif tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base = urljoin(self.page_url, href)

    def handle_data(self, data):
        if self._current is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._current is not None:
            file = _file_of(self._current, "".join(self._text).strip(), self.base, self.page_url)
            self._current = None
            if file is not None and (self.keep is None or self.keep(file.filename)):
                self.rows.append(file_to_row(file))

    @property
    def inside_an_anchor(self) -> bool:
        return self._current is not None


def _file_of(attrs: dict[str, str | None], label: str, base: str, page_url: str) -> DistFile | None:
    """One link of a PEP 503 page as a file record (None: a link without href)."""
    href = attrs.get("href")
    if not href:
        return None
    url = urljoin(base, href)
    path, _, fragment = url.partition("#")
    filename = label or unquote(urlparse(path).path.rsplit("/", 1)[-1])
    hashes = {}
    if "=" in fragment:
        algo, _, digest = fragment.partition("=")
        if algo == "sha256" and not _SHA256.fullmatch(digest):
            raise _bad(page_url, f"the sha256 of {filename} in its link is not 64 hex digits")
        hashes[algo] = digest
    metadata_attr = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
    metadata: bool | dict = False
    if metadata_attr is not None:
        if metadata_attr and "=" in metadata_attr:
            algo, _, digest = metadata_attr.partition("=")
            metadata = {algo: digest}
        else:
            metadata = metadata_attr != "false"
    return DistFile(
        filename=filename,
        url=path,
        hashes=hashes,
        requires_python=attrs.get("data-requires-python") or None,
        yanked=attrs.get("data-yanked") or "data-yanked" in attrs,  # the reason, when it has one
        metadata=metadata,
    )


def _cut_short(head: str, tail: str, parser: _Anchors) -> bool:
    """A page that stops inside a link, or opens <html>/<body> and never closes it."""
    if parser.inside_an_anchor or re.search(r"<a\s[^>]*$", tail, re.I):
        return True
    opened = re.search(r"<(html|body)[\s>]", head[:4096], re.I)
    return bool(opened) and not re.search(r"</(html|body)\s*>", tail, re.I)


def file_to_row(file: DistFile) -> tuple:
    """A marshal-friendly tuple of a file record (for the cache's page digests)."""
    metadata = file.metadata if isinstance(file.metadata, (bool, dict)) else bool(file.metadata)
    return (
        file.filename,
        file.url,
        dict(file.hashes),
        file.requires_python,
        file.yanked,
        metadata,
        file.upload_time,
        file.size,
    )


def row_to_file(row: tuple) -> DistFile:
    return DistFile(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


_ROOT_ANCHOR = re.compile(rb"<a\b[^>]*>([^<]+)</a>", re.I)


def root_names(body: bytes, content_type: str) -> list[str]:
    """The project names of an index's root listing (PEP 691 JSON `projects`, or PEP 503 HTML
    anchors); nothing where the page cannot be read as one."""
    if "json" in content_type:
        try:
            projects = json.loads(body).get("projects", [])
            return [p["name"] for p in projects if isinstance(p, dict) and "name" in p]
        except (ValueError, AttributeError, TypeError):
            return []
    return [m.group(1).decode("utf-8", "replace").strip() for m in _ROOT_ANCHOR.finditer(body)]
