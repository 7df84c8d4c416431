"""Index client: several simple indexes with a first-index strategy, PyTorch-index routing for
torch-family names only, cached and revalidated project pages, offline mode.

A name found on an earlier index is never taken from a later one. The PyTorch index is consulted
only for torch-family names, so a same-named package there can never shadow PyPI's.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from packaging.utils import canonicalize_name

from lockguard.errors import SourceUnreachable
from lockguard.io.index.cache import Cache, CachedPage
from lockguard.io.index.http import HttpClient
from lockguard.io.index.simple_index import JSON_ACCEPT, project_rows, row_to_file
from lockguard.model.dist import DistFile

PAGE_TTL_SECONDS = 600.0

# Names whose CUDA builds live on the PyTorch index (download.pytorch.org/whl/<variant>).
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "triton",
                          "pytorch-triton", "torchrec", "fbgemm-gpu"})


@dataclass(frozen=True)
class ProjectPage:
    name: str
    index_url: str  # the index the files come from
    files: tuple[DistFile, ...]


class IndexClient:
    def __init__(self, http: HttpClient, cache: Cache, indexes: tuple[str, ...], *,
                 torch_index: str | None = None, offline: bool = False, refresh: bool = False,
                 ttl: float = PAGE_TTL_SECONDS, keep_file=None, keep_key: str = "") -> None:
        self.http = http
        self.cache = cache
        self.indexes = tuple(i.rstrip("/") for i in indexes)
        self.torch_index = torch_index.rstrip("/") if torch_index else None
        self.offline = offline
        self.refresh = refresh
        self.ttl = ttl
        self.keep_file = keep_file  # filename -> bool: drop files the target cannot use, unparsed
        self.digest_suffix = f"-{keep_key}" if keep_file else ""  # digests are per file filter
        self._pages: dict[str, ProjectPage | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def indexes_for(self, name: str) -> tuple[str, ...]:
        """Where to look for a name, in order. Torch-family names try the PyTorch index first."""
        if self.torch_index and canonicalize_name(name) in TORCH_FAMILY:
            return (self.torch_index, *self.indexes)
        return self.indexes

    def projects(self, name: str) -> list[ProjectPage]:
        """The pages to take `name` from. torch itself is taken from the PyTorch index *and* the
        first regular index, because the CUDA stack decides per version which one it comes from
        (2.1.2 from PyPI, 2.1.2+cu118 from the index); every other name follows first-index."""
        name = canonicalize_name(name)
        if name == "torch" and self.torch_index:
            pages = [self._page_from(name, (self.torch_index,)), self._page_from(name, self.indexes)]
            return [p for p in pages if p is not None]
        page = self.project(name)
        return [page] if page else []

    def project(self, name: str) -> ProjectPage | None:
        """The files of `name` from the first index that has it (None: no index has it)."""
        name = canonicalize_name(name)
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name not in self._pages:
                self._pages[name] = self._page_from(name, self.indexes_for(name))
            return self._pages[name]

    def _page_from(self, name: str, indexes: tuple[str, ...]) -> ProjectPage | None:
        for index in indexes:
            files = self._fetch_files(index, name)
            if files is not None:
                return ProjectPage(name, index, tuple(files))
        return None

    def _fetch_files(self, index: str, name: str) -> list[DistFile] | None:
        url = f"{index}/{name}/"
        cached = self.cache.get_page(url)
        if cached and (self.offline or (not self.refresh and cached.age() < self.ttl)):
            return self._parse(cached)
        if self.offline:
            raise SourceUnreachable(
                f"--offline: the index page of {name} ({url}) is not in the cache",
                url=url, hint="run once without --offline to fill the cache",
            )
        headers = {"Accept": JSON_ACCEPT}
        if cached and not self.refresh:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        answer = self.http.get(url, headers=headers)
        if answer.status == 304 and cached:
            self.cache.touch_page(cached)
            return self._parse(cached)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise SourceUnreachable(f"{url}: HTTP {answer.status}", url=url,
                                    hint="check the index URL in the intent's indexes")
        page = CachedPage(
            url=url,
            content_type=answer.headers.get("content-type", "text/html"),
            body=answer.content,
            etag=answer.headers.get("etag"),
            last_modified=answer.headers.get("last-modified"),
            fetched_at=time.time(),
        )
        self.cache.put_page(page)
        return self._parse(page)

    def _parse(self, page: CachedPage) -> list[DistFile]:
        """Every file of the page, from a cached digest when there is one (parsing large pages
        is most of a warm resolve), then filtered by `keep_file`."""
        key = page.body_sha256 + self.digest_suffix
        rows = self.cache.get_digest(key)
        if rows is None:
            rows = project_rows(page.body, page.content_type, page.url, self.keep_file)
            self.cache.put_digest(key, rows)
        return [row_to_file(r) for r in rows]
