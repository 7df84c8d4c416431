"""Index client: several simple indexes with a first-index strategy, cached and revalidated
project pages, offline mode, and pages of one given PyTorch index variant on demand.

A name found on an earlier index is never taken from a later one. The PyTorch index is not one of
the intent's indexes: the resolver asks for a page there (`variant_page`) only when it reaches a
torch-family build that only that index publishes, so a same-named package there can never shadow
PyPI's and an unreachable PyTorch index costs nothing when PyPI satisfies the intent.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from packaging.utils import canonicalize_name

from lockguard.errors import SourceUnreachable
from lockguard.io.index.cache import PAGE_TTL_SECONDS, Cache, CachedPage
from lockguard.io.index.early import take as take_early
from lockguard.io.index.http import HttpClient
from lockguard.io.index.simple_index import JSON_ACCEPT, project_rows, root_names, row_to_file
from lockguard.model.dist import DistFile


@dataclass(frozen=True, slots=True)
class ProjectPage:
    name: str
    index_url: str  # the index the files come from
    files: tuple[DistFile, ...]


class IndexClient:
    def __init__(
        self,
        http: HttpClient,
        cache: Cache,
        indexes: tuple[str, ...],
        *,
        offline: bool = False,
        refresh: bool = False,
        ttl: float = PAGE_TTL_SECONDS,
        keep_file=None,
        keep_key: str = "",
    ) -> None:
        self.http = http
        self.cache = cache
        self.indexes = tuple(i.rstrip("/") for i in indexes)
        self.offline = offline
        self.refresh = refresh
        self.ttl = ttl
        self.keep_file = keep_file  # filename -> bool: drop files the target cannot use, unparsed
        self.file_filter = keep_key if keep_file else ""  # kept rows are per file filter
        self._pages: dict[str, ProjectPage | None] = {}
        self._failed: dict[str, SourceUnreachable] = {}  # pages that could not be read in this run
        # every page URL asked for -> the sha256 of the body that answered (None: no such project
        # there): what a resolution read, so that its memo can tell whether it still holds
        self.pages_used: dict[str, str | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def projects(self, name: str) -> list[ProjectPage]:
        """The page to take `name` from: the first of the intent's indexes that has it."""
        page = self.project(name)
        return [page] if page else []

    def project(self, name: str) -> ProjectPage | None:
        """The files of `name` from the first index that has it (None: no index has it)."""
        return self._cached(canonicalize_name(name), self.indexes)

    def names_known(self) -> set[str]:
        """Project names this run can suggest from without another request: the pages it read,
        and each index's root listing where the cache already holds one (never fetched for
        this: PyPI's lists some 700,000 names)."""
        names = {page.name for page in list(self._pages.values()) if page is not None}
        for index in self.indexes:
            root = self.cache.get_page(f"{index}/")
            if root is not None:
                names.update(root_names(root.body, root.content_type))
        return names

    def variant_page(self, name: str, index_url: str) -> ProjectPage | None:
        """The files of `name` on one PyTorch index variant (.../whl/cu118); None: not there."""
        return self._cached(canonicalize_name(name), (index_url.rstrip("/"),))

    def _cached(self, name: str, indexes: tuple[str, ...]) -> ProjectPage | None:
        key = f"{name} {' '.join(indexes)}"
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key in self._failed:  # asked again in this run: the same answer, not another wait
                raise self._failed[key]
            if key not in self._pages:
                try:
                    self._pages[key] = self._page_from(name, indexes)
                except SourceUnreachable as exc:
                    self._failed[key] = exc
                    raise
            return self._pages[key]

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
            self.pages_used[url] = cached.body_sha256
            return self._parse(cached)
        if self.offline:
            raise SourceUnreachable(
                f"--offline: the index page of {name} ({url}) is not in the cache",
                url=url,
                hint="run once without --offline to fill the cache",
            )
        headers = {"Accept": JSON_ACCEPT}
        if cached and not self.refresh:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        answer = take_early(url, headers) or self.http.get(url, headers=headers)
        if answer.status == 304 and cached:
            self.cache.touch_page(cached)
            self.pages_used[url] = cached.body_sha256
            return self._parse(cached)
        if answer.status == 404:
            self.pages_used[url] = None
            return None
        if answer.status != 200:
            raise SourceUnreachable(
                f"{url}: HTTP {answer.status}",
                url=url,
                hint="check the index URL in the intent's indexes",
            )
        page = CachedPage(
            url=url,
            content_type=answer.headers.get("content-type", "text/html"),
            body=answer.content,
            etag=answer.headers.get("etag"),
            last_modified=answer.headers.get("last-modified"),
            fetched_at=time.time(),
        )
        files = self._parse(page)  # a broken page raises here and is never cached
        self.cache.put_page(page)
        self.pages_used[url] = page.body_sha256
        return files

    def _parse(self, page: CachedPage) -> list[DistFile]:
        """Every file of the page, from its kept rows when there are (parsing large pages is most
        of a warm resolve), then filtered by `keep_file`. The rows are kept by page URL as well
        as body: relative links are made absolute against the URL that served the page."""
        rows = self.cache.get_rows(page.url, page.body_sha256, self.file_filter)
        if rows is None:
            rows = project_rows(page.body, page.content_type, page.url, self.keep_file)
            self.cache.put_rows(page.url, page.body_sha256, self.file_filter, rows)
        return [row_to_file(r) for r in rows]
