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
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlparse

from lockguard.errors import InstallFailed, SourceUnreachable
from lockguard.install.locked_files import LockedFile
from lockguard.io.index.cache import Cache
from lockguard.io.index.http import HttpClient

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


def fetch_locked(
    files: list[LockedFile], http: HttpClient, on_bytes: OnBytes, folder: Path | None = None
) -> dict[str, Path]:
    """Each file's local path (sha256 -> path), downloading what the cache does not hold yet, one
    file at a time in the lock's order (`on_bytes` hears of downloads only). Raises
    SourceUnreachable (exit 4) naming the file that could not be downloaded under the stall rule,
    InstallFailed when its bytes are not the locked ones."""
    folder = folder or files_folder()
    out: dict[str, Path] = {}
    total = sum(f.size or 0 for f in files)
    done = 0
    for file in files:
        if file.url.startswith("file://"):
            local = Path(unquote(urlparse(file.url).path))
            if _sha256_of(local) != file.sha256:
                raise InstallFailed(
                    f"{local} ({file.name} {file.version}) is not the file the lock names: its "
                    f"sha256 is not {file.sha256}",
                    hint="the lock and the file disagree; lock again, or put the locked file back",
                )
            out[file.sha256] = local
            continue
        target = folder / file.sha256 / file.filename
        if target.is_file():  # renamed into place only once verified
            out[file.sha256] = target
            total -= file.size or 0  # "in all" counts what is downloaded
            continue
        out[file.sha256] = _download(file, http, target, on_bytes, done, total)
        done += file.size or out[file.sha256].stat().st_size
    return out


def _download(
    file: LockedFile, http: HttpClient, target: Path, on_bytes: OnBytes, done: int, total: int
) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.{os.getpid()}.part")

    def on_chunk(size: int, declared: int | None) -> None:
        on_bytes(file, size, file.size or declared, done + size, total)

    sink = _PartFile(part, on_chunk)
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
