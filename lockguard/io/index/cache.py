"""The index side of lockguard's cache: each value a kind of entry of the one cache layer
(lockguard/io/cache/), keyed by everything it depends on.

- a page's state (content type, ETag, Last-Modified, when it was fetched, the body's sha256), by
  the page URL: the client revalidates it, or serves it within a short TTL (always when offline);
- a page's body, by its sha256 (two mirrors serving the same bytes share it: the bytes are equal);
- a page's parsed rows, by the page URL, the body's sha256 and the file filter: a row's URL is
  made absolute against the URL that served the page, so two indexes serving the same relative
  links never share rows;
- a file's METADATA, by the file's sha256 (immutable; the fetcher checks it against the hash the
  index advertises for it, PEP 658, before using it);
- whole resolutions, by io/index/resolve_memo.py's key.
"""

from __future__ import annotations

import hashlib
import marshal
import time
from dataclasses import dataclass, replace
from pathlib import Path

from lockguard.io.cache.root import tools_folder
from lockguard.io.cache.store import Store

PAGE_TTL_SECONDS = 600.0  # a page this young is served without asking the index again

PAGE_STATES = Store("page-state", 1)
PAGE_BODIES = Store("page-body", 1)
PAGE_ROWS = Store("page-rows", 1)
METADATA = Store("metadata", 1)
RESOLUTIONS = Store("resolution", 1)


@dataclass(frozen=True, slots=True)
class CachedPage:
    url: str
    content_type: str
    body: bytes
    etag: str | None
    last_modified: str | None
    fetched_at: float
    body_sha256: str = ""

    def __post_init__(self) -> None:
        if not self.body_sha256:  # a page just fetched: its digest, once
            object.__setattr__(self, "body_sha256", hashlib.sha256(self.body).hexdigest())

    def age(self) -> float:
        return time.time() - self.fetched_at


class Cache:
    """The index client's, the metadata fetcher's and the resolution memo's view of the cache."""

    @property
    def root(self) -> Path:
        """The folder where rattler keeps its own caches (`root / "conda"`, `root / "pkgs"`)."""
        return Path(tools_folder())

    # -- metadata (immutable, by file sha256) -------------------------------------------------

    def get_metadata(self, file_sha256: str) -> bytes | None:
        return METADATA.get(file_sha256)

    def put_metadata(self, file_sha256: str, data: bytes) -> None:
        METADATA.put(file_sha256, data)

    def discard_metadata(self, file_sha256: str) -> None:
        METADATA.discard(file_sha256)

    # -- index pages (revalidated) -------------------------------------------------------------

    def has_page(self, url: str) -> bool:
        """Whether a page of `url` is kept (not validated: a hint for io/index/early.py)."""
        return PAGE_STATES.exists(url)

    def get_page(self, url: str) -> CachedPage | None:
        state = _state(url)
        if state is None:
            return None
        content_type, etag, last_modified, fetched_at, sha = state
        body = PAGE_BODIES.get(sha)
        if body is None:
            return None
        return CachedPage(url, content_type, body, etag, last_modified, fetched_at, sha)

    def put_page(self, page: CachedPage) -> None:
        # the body first: a state never names a missing one
        if PAGE_BODIES.put(page.body_sha256, page.body):
            _put_state(page)

    def touch_page(self, page: CachedPage) -> None:
        """The page was revalidated (HTTP 304): its state is rewritten, its body stays."""
        _put_state(replace(page, fetched_at=time.time()))

    def page_state(self, url: str) -> tuple[str, float] | None:
        """(body sha256, fetched at) of the kept page of `url`, from its state alone (None: not
        kept, or its body is gone); `get_page` still checks the body it reads."""
        state = _state(url)
        if state is None or not PAGE_BODIES.exists(state[4]):
            return None
        return state[4], state[3]

    # -- parsed pages (rows of a page body, so warm runs skip JSON/HTML parsing) ------------------

    def get_rows(self, url: str, body_sha256: str, file_filter: str) -> list | None:
        data = PAGE_ROWS.get(_rows_key(url, body_sha256, file_filter))
        if data is None:
            return None
        try:
            rows = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return (
            rows
            if type(rows) is list and all(type(r) is tuple and len(r) == 8 for r in rows)
            else None
        )

    def put_rows(self, url: str, body_sha256: str, file_filter: str, rows: list) -> None:
        PAGE_ROWS.put(_rows_key(url, body_sha256, file_filter), marshal.dumps(rows))

    # -- whole resolutions (io/index/resolve_memo.py decides when one still holds) ---------------

    def get_resolution(self, key: str) -> bytes | None:
        return RESOLUTIONS.get(key)

    def put_resolution(self, key: str, data: bytes) -> None:
        RESOLUTIONS.put(key, data)


def _rows_key(url: str, body_sha256: str, file_filter: str) -> str:
    return f"{url}\0{body_sha256}\0{file_filter}"


def _state(url: str) -> tuple | None:
    data = PAGE_STATES.get(url)
    if data is None:
        return None
    try:
        state = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not (
        type(state) is tuple
        and len(state) == 6
        and state[0] == url
        and type(state[1]) is str
        and all(v is None or type(v) is str for v in state[2:4])
        and type(state[4]) is float
        and type(state[5]) is str
        and len(state[5]) == 64
    ):
        return None
    return state[1], state[2], state[3], state[4], state[5]


def _put_state(page: CachedPage) -> None:
    PAGE_STATES.put(
        page.url,
        marshal.dumps(
            (
                page.url,
                page.content_type,
                page.etag,
                page.last_modified,
                float(page.fetched_at),
                page.body_sha256,
            )
        ),
    )
