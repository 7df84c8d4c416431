"""The PackageSource the resolver uses: index pages and metadata, prefetched in parallel.

The resolver (pure) only hints what it will need next; this module turns the hints into
background fetches so that page and metadata round trips overlap with resolvelib's work.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from packaging.utils import canonicalize_name

from lockguard.io.index import IndexClient
from lockguard.io.metadata import MetadataFetcher
from lockguard.model.dist import DistFile, DistMetadata
from lockguard.resolve.ports import Project


class IndexPackageSource:
    def __init__(self, index: IndexClient, fetcher: MetadataFetcher, workers: int = 16) -> None:
        self.index = index
        self.fetcher = fetcher
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lockguard-fetch")
        self._metadata: dict[str, Future] = {}
        self._pages: dict[str, Future] = {}
        self._advertises: dict[str, bool] = {}  # file url -> its page advertises PEP 658 metadata
        self._guard = threading.Lock()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> IndexPackageSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- PackageSource ---------------------------------------------------------------------------

    def projects(self, name: str) -> list[Project]:
        future = self._pages.get(canonicalize_name(name))
        if future is not None:
            future.exception()  # wait; a failed prefetch is retried below and raises here
        pages = self.index.projects(name)
        for page in pages:
            advertises = any(f.metadata for f in page.files)
            for file in page.files:
                self._advertises[file.url] = advertises
        return [Project(p.name, p.index_url, p.files) for p in pages]

    def metadata(self, name: str, version: str, file: DistFile) -> DistMetadata:
        future = self._submit_metadata(name, version, file)
        return future.result()

    def prefetch_metadata(self, name: str, version: str, file: DistFile) -> None:
        self._submit_metadata(name, version, file)

    def prefetch_projects(self, names: list[str]) -> None:
        with self._guard:
            for name in names:
                key = canonicalize_name(name)
                if key not in self._pages:
                    self._pages[key] = self._pool.submit(self.index.projects, key)

    # -- internals -------------------------------------------------------------------------------

    def _submit_metadata(self, name: str, version: str, file: DistFile) -> Future:
        with self._guard:
            future = self._metadata.get(file.url)
            if future is None:
                # a page that advertises metadata for other files has none for this one
                try_unadvertised = not self._advertises.get(file.url, False)
                future = self._pool.submit(self.fetcher.fetch, name, version, file,
                                           try_unadvertised=try_unadvertised)
                self._metadata[file.url] = future
            return future
