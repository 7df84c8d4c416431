"""The PackageSource the resolver uses: index pages and metadata, prefetched in parallel.

The resolver (pure) only hints what it will need next; this module turns the hints into
background fetches so that page and metadata round trips overlap with resolvelib's work. What the
resolver asks for itself never waits behind those guesses: a page or a metadata fetch still queued
behind hundreds of speculative ones is done at once in the resolver's own thread (unpinned sglang
with `cuda = "13.0"` waited ~10 s per rejected version for the queue to drain, issue 23).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from packaging.utils import canonicalize_name

from lockguard.io.index.client import IndexClient
from lockguard.io.index.metadata import MetadataFetcher
from lockguard.io.index.workers import DaemonPool, import_worker_modules
from lockguard.model.dist import DistFile, DistMetadata
from lockguard.resolve.ports import Project


class IndexPackageSource:
    """`speculator` (optional) turns every fetched metadata into prefetches of its dependencies'
    pages, and every fetched page into a prefetch of the likely candidate's metadata."""

    def __init__(
        self, index: IndexClient, fetcher: MetadataFetcher, workers: int = 48, speculator=None
    ) -> None:
        self.index = index
        self.fetcher = fetcher
        self.speculator = speculator
        self._speculated: set[str] = set()
        import_worker_modules()
        self._pool = DaemonPool(workers, "lockguard-fetch")
        self._metadata: dict[str, Future] = {}
        self._pages: dict[str, Future] = {}
        self._jobs: dict[
            Future, tuple
        ] = {}  # a metadata future not started yet -> its fetch's arguments
        self._guard = threading.Lock()

    def close(self) -> None:
        self._pool.shutdown()
        with self._guard:
            for future in self._metadata.values():
                # still queued: nobody will run it (running ones cannot be cancelled)
                future.cancel()
            self._jobs.clear()

    def __enter__(self) -> IndexPackageSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- PackageSource ---------------------------------------------------------------------------

    def projects(self, name: str) -> list[Project]:
        """For the resolver (main thread): loaded here, never waiting for a prefetch still queued
        (the index client loads each page once: a prefetch already running is waited for there,
        one that runs later finds the page loaded; a failed one is asked again and raises here).
        Workers call `_load_projects` too: a worker must never wait on a future queued behind it."""
        return self._load_projects(name)

    def _load_projects(self, name: str) -> list[Project]:
        # the index serializes per name; it never waits on the pool
        pages = self.index.projects(name)
        return [Project(p.name, p.index_url, p.files) for p in pages]

    def index_project(self, name: str, index_url: str) -> Project | None:
        page = self.index.variant_page(name, index_url)
        if page is None:
            return None
        return Project(page.name, page.index_url, page.files)

    def metadata(self, name: str, version: str, file: DistFile) -> DistMetadata:
        future = self._submit_metadata(name, version, file)
        with self._guard:
            job = self._jobs.get(future)
        # still queued: fetched here, now (a worker that gets to it later finds it claimed)
        if job is not None:
            self._fetch_into(future, *job)
        return future.result()

    def prefetch_metadata(self, name: str, version: str, file: DistFile) -> None:
        self._submit_metadata(name, version, file)

    def prefetch_projects(self, names: list[str]) -> None:
        with self._guard:
            for name in names:
                key = canonicalize_name(name)
                if key not in self._pages:
                    self._pages[key] = self._pool.submit(self._load_projects, key)

    # -- speculation -------------------------------------------------------------------------------

    def _speculate_page(self, name: str, specifier) -> None:
        """In a worker: load a page, then the metadata of the candidate the resolver will likely
        pick."""
        for page in self._load_projects(name):
            guess = self.speculator.best_file(page, specifier)
            if guess is not None and not guess[1].is_wheel:
                return  # never build an sdist on a guess: a build can take minutes of every CPU
            if guess is not None:
                # fetched right here, not queued behind other work: this worker is free, and the
                # dependency chain (page -> metadata -> the dependencies' pages) is a cold resolve's
                # critical path
                self._submit_metadata(name, guess[0], guess[1], inline=True)
                return

    def _speculate_dependencies(self, future: Future) -> None:
        # a prefetch cancelled at shutdown, or one that failed, speculates nothing (and must not
        # raise here: concurrent.futures would print the exception of a callback to stderr)
        if future.cancelled() or future.exception() is not None:
            return
        # parsed outside the lock: the resolver's own calls wait on it (a warm resolve's main
        # thread spent a sixth of its time here while callbacks parsed requirements)
        wanted = self.speculator.dependencies(future.result())
        new = []
        with self._guard:
            for name, specifier in wanted:
                if name in self._speculated or name == "python":
                    continue
                self._speculated.add(name)
                new.append((name, specifier))
        for name, specifier in new:  # outside the lock: a submit may start a thread
            self._pool.submit(self._speculate_page, name, specifier)

    # -- internals -------------------------------------------------------------------------------

    def _submit_metadata(
        self, name: str, version: str, file: DistFile, *, inline: bool = False
    ) -> Future:
        """The future metadata of `file`; fetched by the pool, or `inline` in the calling worker
        (never the resolver's thread: it must not block on a fetch it did not ask to wait for)."""
        with self._guard:
            future = self._metadata.get(file.url)
            if future is not None:
                return future
            future = self._metadata[file.url] = Future()
            self._jobs[future] = (name, version, file)
        # outside the lock (the resolver's thread waits on it): the submit may start a thread, and
        # a future that is already done runs its callback right here
        if self.speculator is not None:
            future.add_done_callback(self._speculate_dependencies)
        if inline:
            self._fetch_into(future, name, version, file)
        else:
            self._pool.submit(self._fetch_into, future, name, version, file)
        return future

    def _fetch_into(self, future: Future, name: str, version: str, file: DistFile) -> None:
        # whoever claims the job first runs it: a worker, or the resolver's thread
        with self._guard:
            if self._jobs.pop(future, None) is None:
                return
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(self.fetcher.fetch(name, version, file))
        except BaseException as exc:  # handed to whoever waits on the metadata
            future.set_exception(exc)
