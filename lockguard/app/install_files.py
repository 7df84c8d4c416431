"""The files a clean-install's engine installs from: the lock's own files, found on the lock's
indexes (or named by the pylock.toml), chosen for the target interpreter, downloaded by lockguard
under the resolve's stall rule into its cache (io/env/engines/downloads.py), then handed to the
engine as local files with `--no-index` (each cached file's own folder as a --find-links location,
the same every run; a pylock.toml's local files on a links page): the engine downloads nothing and
asks no index. A package whose locked file lockguard cannot find, or an sdist (whose build needs
its build requirements from an index), keeps the lock's index options for the engine."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard.errors import LockguardError
from lockguard.install.locked_files import Choice, LockedFile, choose_files, link_files
from lockguard.install.pip_requirements import requirements_text
from lockguard.install.pylock_source import links_page
from lockguard.io.env.engines.downloads import (
    cached_files,
    fetch_as_landed,
    files_folder,
    host_glibc,
)
from lockguard.io.index.cache import Cache
from lockguard.io.write import write_atomic
from lockguard.model.dist import DistFile
from lockguard.model.intent import CudaRequest
from lockguard.model.names import canonical_name
from lockguard.model.target import Target
from lockguard.model.versions import PythonVersion
from lockguard.model.wording import counted, human_size
from lockguard.resolve.tags import wheel_rank

if TYPE_CHECKING:
    from lockguard.app.install_source import LockSource
    from lockguard.app.reporting import InstallProgress
    from lockguard.install.plan import Plan
    from lockguard.io.index.client import IndexClient
    from lockguard.io.index.http import HttpClient
    from lockguard.model.prefix import PrefixSnapshot

PYPI = "https://pypi.org/simple"
LOG_EVERY = 10.0  # seconds between progress lines in a log (not a terminal)
LIVE_EVERY = 0.1
PAGES_AT_ONCE = 16


def install_batches(
    plan: Plan,
    scan: PrefixSnapshot,
    source: LockSource,
    folder: Path,
    progress: InstallProgress,
    *,
    batched: bool = False,
) -> Generator[Path, None, None]:
    """Requirements files for the engine (install.txt, and links.html for a pylock.toml's own
    files, in `folder`), each once its locked files are downloaded. `batched` (an engine that
    starts in milliseconds, uv): when every file is a wheel lockguard found, one file per batch
    of downloads as they land (io/env/engines/downloads.fetch_as_landed), so the engine unpacks
    the first files while the others arrive; otherwise one file for all. When lockguard's cache
    holds a fitting wheel of every package (a warm re-install) no HTTP client is opened: httpx is
    not even imported (about 80 ms of a warm run, its teardown included). Close the generator
    (contextlib.closing) when stopping early: that stops the downloads in flight."""
    rank = _ranker(source, scan)
    choice = choose_files(plan.install, source.requirements, _cached_candidates(source), rank)
    if not choice.missing and all(f.is_wheel for f in choice.files):  # no index page needed
        yield from _batches(plan, source, choice, None, folder, progress, batched)
        return
    from lockguard.io.index.client import IndexClient
    from lockguard.io.index.http import HttpClient

    with HttpClient() as http:
        http.prepare()  # httpx imported in this thread, not first in a worker (early.py)
        client = IndexClient(http, Cache(), ())
        candidates = _candidates(source, client, rank)
        _prefetch(candidates, [pin.partition("==")[0] for pin in plan.install])
        choice = choose_files(plan.install, source.requirements, candidates, rank)
        yield from _batches(plan, source, choice, http, folder, progress, batched)


def _batches(
    plan: Plan,
    source: LockSource,
    choice: Choice,
    http: HttpClient | None,
    folder: Path,
    progress: InstallProgress,
    batched: bool,
) -> Generator[Path, None, None]:
    line = DownloadLine(progress, len(choice.files))
    local = not choice.missing and all(f.is_wheel for f in choice.files)
    files: dict[str, Path] = {}
    pins = {canonical_name(pin.partition("==")[0]): pin for pin in plan.install}
    with contextlib.closing(fetch_as_landed(choice.files, http, line)) as landed:
        for count, batch in enumerate(landed, 1):
            files.update((file.sha256, path) for file, path in batch)
            if local and batched and batch:
                name = f"install.{count}.txt"
                chosen = [file for file, _path in batch]
                yield _write(source, [pins[f.name] for f in chosen], chosen, files, folder, name)
    if choice.files:
        size = sum(files[f.sha256].stat().st_size for f in choice.files)
        progress.say(
            f"{counted(len(choice.files), 'locked file')} ready ({human_size(size)}; "
            f"downloaded {len(line.files)}, {len(choice.files) - len(line.files)} from "
            "lockguard's cache or the lock's own paths)"
        )
    if not (local and batched):
        yield _write(source, plan.install, choice.files, files, folder, "install.txt", local)


def _write(
    source: LockSource,
    install: list[str],
    chosen: list[LockedFile],
    files: dict[str, Path],
    folder: Path,
    name: str,
    local: bool = True,
) -> Path:
    """One requirements file: `install`'s lock entries, found among `chosen`'s local files (and,
    when not `local`, the lock's indexes and links too)."""
    # a file in lockguard's cache is found in its own folder (<cache>/files/<sha256>/), a place
    # that never changes: uv keys the wheels it unpacked by where it found them, so a links page
    # at a new path each run (the run's folder) had it unzip every wheel again, every run (0.3 s
    # for numpy + requests, more than its whole warm install; gigabytes for torch), and its
    # cache grew by a copy of the lock per run
    cache = files_folder()
    folders: list[Path] = []
    links: list[str] = []
    for f in chosen:
        path = files[f.sha256]
        if path.parent == cache / f.sha256:
            folders.append(path.parent)
        else:  # a pylock.toml's local file, where it lies
            links.append(f"{path.as_uri()}#sha256={f.sha256}")
    if not local:  # the engine may need a pylock.toml's other files (an sdist's, a missing one)
        links += [link for link in source.links if link not in links]
    find_links: list[Path] = list(dict.fromkeys(folders))
    if links:
        page = folder / (name.removesuffix(".txt").replace("install", "links", 1) + ".html")
        find_links.append(page)
        write_atomic(page, links_page(links))  # never through a link
    requirements = folder / name
    write_atomic(
        requirements,
        requirements_text(source.requirements, install, find_links=find_links, no_index=local),
    )
    return requirements


def _candidates(
    source: LockSource, client: IndexClient, rank: Callable[[str], int | None]
) -> Callable[[str], list[DistFile]]:
    """A package's locked files: a fitting wheel lockguard's cache holds already (no index is
    asked), else the pylock.toml's links, else the first index that lists one."""
    linked = link_files(source.links)
    lock = source.requirements
    indexes = (
        [lock.index_url or PYPI, *lock.extra_index_urls] if not linked or lock.index_url else []
    )
    wanted = {name: set(entry.hashes) for name, entry in lock.entries.items()}

    from_cache = _cached_candidates(source)

    def candidates(name: str) -> list[DistFile]:
        cached = from_cache(name)
        if any(f.is_wheel and rank(f.filename) is not None for f in cached):
            return cached
        mine = [f for f in linked.get(name, []) if f.sha256 in wanted.get(name, set())]
        if mine:
            return mine
        for index in indexes:  # the first index that has a locked file of it
            page = client.variant_page(name, index)
            found = [f for f in page.files if f.sha256 in wanted.get(name, set())] if page else []
            if found:
                return found
        return []

    return candidates


def _cached_candidates(source: LockSource) -> Callable[[str], list[DistFile]]:
    """A package's locked files that lockguard's cache holds (no index is asked)."""
    wanted = {name: sorted(entry.hashes) for name, entry in source.requirements.entries.items()}

    def cached(name: str) -> list[DistFile]:
        return [
            DistFile(path.name, path.as_uri(), {"sha256": digest})
            for digest, path in cached_files(wanted.get(name, []))
        ]

    return cached


def _prefetch(candidates: Callable[[str], list[DistFile]], names: list[str]) -> None:
    """The index pages of every package at once (IndexClient keeps each answer, a failure
    included, for the choice that follows in the lock's order): one page after another is a
    round trip per package."""
    if len(names) < 2:
        return

    def ask(name: str) -> None:
        with contextlib.suppress(LockguardError):  # raised again, in order, by the choice
            candidates(canonical_name(name))

    with ThreadPoolExecutor(PAGES_AT_ONCE, "lockguard-pages") as pool:
        list(pool.map(ask, names))


def _ranker(source: LockSource, scan: PrefixSnapshot) -> Callable[[str], int | None]:
    """A wheel's rank on the target interpreter (its Python, this machine's platform and glibc)."""
    try:
        major, minor = scan.python_version.split(".")[:2]
        target = Target(
            source.platform, PythonVersion(int(major), int(minor)), host_glibc(), CudaRequest.none()
        )
        target.machine  # noqa: B018 (a platform lockguard does not know: no wheel fits)
    except (ValueError, KeyError):
        return lambda _filename: None
    return lambda filename: wheel_rank(target, filename)


class DownloadLine:
    """Bytes done and the current file: a live line on a terminal, a line every LOG_EVERY seconds
    in a log (CI)."""

    def __init__(
        self, progress: InstallProgress, count: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.progress = progress
        self.count = count
        self.clock = clock
        self.every = LIVE_EVERY if progress.live else LOG_EVERY
        self.last: float | None = None
        self.files: list[str] = []

    def __call__(
        self, file: LockedFile, size: int, file_size: int | None, done: int, total: int
    ) -> None:
        if file.filename not in self.files:
            self.files.append(file.filename)
        now = self.clock()
        if self.last is not None and now - self.last < self.every:
            return
        self.last = now
        of = f"/{human_size(file_size)}" if file_size else ""
        all_of = f"/{human_size(total)}" if total else ""
        self.progress.step(
            f"downloading {file.filename}: {human_size(size)}{of} "
            f"(file {len(self.files)}/{self.count}; {human_size(done)}{all_of} in all)"
        )
