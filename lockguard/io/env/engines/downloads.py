"""The lock's files, downloaded by lockguard before an install engine runs (issue 32).

Every download goes through lockguard's own HTTP client (io/index/http.py) and so has the resolve's
stall rule: no answer within LOCKGUARD_HTTP_TIMEOUT (10 s), and past six of those the file must
keep arriving at 256 kB/s; a download that breaks the rule is tried once more, then the run stops
(SourceUnreachable, exit 4, naming the file) and the transaction rolls the prefix back. uv's and
pip's own downloads have no such rule (uv bounds the wait for each read, never the rate), so the
engines get only local files: a trickling wheel cannot keep a clean-install (or CI) waiting.

A file is kept under lockguard's cache by its sha256 (`<cache>/files/<sha256>/<filename>`), written
as `.part` and renamed into place only once its bytes hash to what the lock says: a file there is
always the locked bytes, so a warm re-install downloads nothing. A file:// URL (a pylock.toml's
local `path`) is not copied: it is hashed where it lies."""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import unquote, urlparse

from lockguard.errors import InstallFailed, SourceUnreachable
from lockguard.install.locked_files import LockedFile
from lockguard.io.index.cache import Cache

if TYPE_CHECKING:  # httpx is imported only where a file is downloaded (a warm cache needs none)
    from lockguard.io.index.http import HttpClient

DOWNLOADS_AT_ONCE = 8  # the lock's files downloaded in parallel (uv: 50; most time is torch's one)
MAX_FILE = 64 << 30  # no wheel is larger (torch's are 2.5 GB); an endless answer is cut off


# (the file being downloaded, its bytes so far, its size if known, bytes of all files so far,
# all files' size as far as known)
OnBytes = Callable[[LockedFile, int, int | None, int, int], None]


def host_glibc() -> str | None:
    """This machine's glibc ("2.35"), None where there is none (musl, macOS)."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        return None
    parts = text.split()
    return parts[1] if len(parts) == 2 and parts[0] == "glibc" else None


def files_folder() -> Path:
    return Cache().root / "files"


def cached_files(sha256s: Iterable[str], folder: Path | None = None) -> list[tuple[str, Path]]:
    """(sha256, path) of the files lockguard's cache holds with one of these digests (verified
    when they were downloaded): a warm clean-install asks no index page for them."""
    folder = folder or files_folder()
    out = []
    for digest in sha256s:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            continue  # never a path out of the folder
        with contextlib.suppress(OSError):
            out += [
                (digest, entry)
                for entry in (folder / digest).iterdir()
                if not entry.name.endswith(".part") and entry.is_file()
            ]
    return out


class _PartFile:
    """HttpClient's sink: the body into a .part file, hashed as it arrives."""

    def __init__(self, path: Path, on_chunk: Callable[[int, int | None], None]) -> None:
        self.path = path
        self.on_chunk = on_chunk
        self.handle: BinaryIO | None = None
        self.digest = hashlib.sha256()
        self.size = 0
        self.declared: int | None = None

    def restart(self, declared: int | None) -> None:
        self.close()
        self.handle = open(self.path, "wb")  # noqa: SIM115 (closed by close())
        self.digest = hashlib.sha256()
        self.size = 0
        self.declared = declared
        self.on_chunk(0, declared)

    def write(self, chunk: bytes) -> None:
        assert self.handle is not None
        self.handle.write(chunk)
        self.digest.update(chunk)
        self.size += len(chunk)
        self.on_chunk(self.size, self.declared)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class _Stopped(Exception):
    """Another download failed (or the run was interrupted): this one stops at its next chunk."""


class _Tally:
    """The bytes of every download in flight, reported as one (downloads run in threads)."""

    def __init__(self, on_bytes: OnBytes, total: int) -> None:
        self.on_bytes = on_bytes
        self.total = total
        self.sizes: dict[str, int] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def chunk(self, file: LockedFile, size: int, declared: int | None) -> None:
        if self.stop.is_set():
            raise _Stopped()
        with self.lock:
            self.sizes[file.sha256] = size
            self.on_bytes(file, size, file.size or declared, sum(self.sizes.values()), self.total)


def fetch_locked(
    files: list[LockedFile],
    http: HttpClient | None,
    on_bytes: OnBytes,
    folder: Path | None = None,
    workers: int = DOWNLOADS_AT_ONCE,
) -> dict[str, Path]:
    """Each file's local path (sha256 -> path), downloading what the cache does not hold yet,
    `workers` files at once (`on_bytes` hears of downloads only, from one thread at a time). The
    first download that fails stops the others; raises SourceUnreachable (exit 4) naming the file
    that could not be downloaded under the stall rule, InstallFailed when its bytes are not the
    locked ones. `http` may be None when every file is in the cache or local."""
    out: dict[str, Path] = {}
    with contextlib.closing(fetch_as_landed(files, http, on_bytes, folder, workers)) as landed:
        for batch in landed:
            out.update((file.sha256, path) for file, path in batch)
    return out


Landed = list[tuple[LockedFile, Path]]


def fetch_as_landed(
    files: list[LockedFile],
    http: HttpClient | None,
    on_bytes: OnBytes,
    folder: Path | None = None,
    workers: int = DOWNLOADS_AT_ONCE,
) -> Generator[Landed, None, None]:
    """fetch_locked's files in batches, as they land: first what the cache (or the lock's own
    paths) holds, then, each time the caller asks again, every download that finished since (at
    least one; the downloads go on in their threads while the caller works on a batch, so an
    engine can unpack one file while the next arrives). The largest files are started first:
    the last batch is then the small ones, quick to install. Close the generator (contextlib.
    closing) to stop the downloads in flight when the caller stops early; errors as fetch_locked."""
    folder = folder or files_folder()
    ready: Landed = []
    pending: list[tuple[LockedFile, Path]] = []
    for file in files:
        target = folder / file.sha256 / file.filename
        if target.is_file():  # renamed into place only once verified
            ready.append((file, target))
            continue
        if file.url.startswith("file://"):
            local = Path(unquote(urlparse(file.url).path))
            if _sha256_of(local) != file.sha256:
                raise InstallFailed(
                    f"{local} ({file.name} {file.version}) is not the file the lock names: its "
                    f"sha256 is not {file.sha256}",
                    hint="the lock and the file disagree; lock again, or put the locked file back",
                )
            ready.append((file, local))
            continue
        pending.append((file, target))
    if pending and http is None:
        raise ValueError(
            f"{pending[0][0].filename} is not in lockguard's cache: it needs a download"
        )
    if ready or not pending:
        yield ready
    if not pending or http is None:
        return
    pending.sort(key=lambda item: -(item[0].size or 0))
    tally = _Tally(on_bytes, sum(f.size or 0 for f, _t in pending))
    finished: queue.SimpleQueue[Future[Path]] = queue.SimpleQueue()
    pool = ThreadPoolExecutor(max(1, min(workers, len(pending))), "lockguard-download")
    try:
        running: dict[Future[Path], LockedFile] = {}
        for file, target in pending:
            future = pool.submit(_download, file, http, target, tally)
            running[future] = file
            future.add_done_callback(finished.put)
        left = len(running)
        while left:
            done = [finished.get()]  # a lock wait: an interrupt still reaches this thread
            with contextlib.suppress(queue.Empty):
                while True:
                    done.append(finished.get_nowait())
            left -= len(done)
            batch: Landed = []
            for future in done:
                error = future.exception()
                if error is not None and not isinstance(error, _Stopped):
                    raise error  # the finally stops the others
                if error is None:
                    batch.append((running[future], future.result()))
            if batch:
                yield batch
    finally:
        tally.stop.set()  # an error, an interrupt, or a caller that stopped early
        pool.shutdown(wait=True, cancel_futures=True)


def _download(file: LockedFile, http: HttpClient, target: Path, tally: _Tally) -> Path:
    if tally.stop.is_set():
        raise _Stopped()
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    sink = _PartFile(part, lambda size, declared: tally.chunk(file, size, declared))
    try:
        try:
            answer = http.get(file.url, max_bytes=MAX_FILE, sink=sink)
        except SourceUnreachable as exc:
            raise SourceUnreachable(
                f"downloading {file.filename} ({file.name} {file.version}) failed: {exc.message}",
                url=file.url,
                hint="the index serves it too slowly or not at all; run again when it answers "
                "(LOCKGUARD_HTTP_TIMEOUT=SECONDS waits longer for each answer)",
            ) from None
        finally:
            sink.close()
        if answer.status != 200:
            raise SourceUnreachable(
                f"downloading {file.filename} ({file.name} {file.version}): HTTP {answer.status} "
                f"from {file.url}",
                url=file.url,
                hint="the index no longer serves the locked file; lock again",
            )
        if sink.digest.hexdigest() != file.sha256:
            raise InstallFailed(
                f"{file.url} ({file.name} {file.version}) is not the file the lock names: its "
                f"sha256 is {sink.digest.hexdigest()}, the lock says {file.sha256}",
                hint="the index serves other bytes under that name than when it was locked; "
                "nothing was installed from it",
            )
        os.replace(part, target)
        return target
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


def _sha256_of(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()
