"""Read a wheel's METADATA over HTTP range requests, never downloading the whole wheel.

A read-only file object fetches byte ranges on demand (the tail first: the zip's central
directory lives there), and `zipfile` does the zip parsing. This is pip's lazy_wheel idea. When a
server ignores `Range` and answers 200 with the full body, the caller learns it through
`ranges_refused` and may warn: that is the only path that downloads a whole file.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient, Response

TAIL_BYTES = 64 * 1024
MIN_CHUNK = 16 * 1024
MAX_WHEEL = 4 * 1024**3  # a server that ignores Range sends the whole wheel (torch: ~1 GB)
MAX_METADATA = 4 * 1024**2  # a METADATA member larger than this is refused, unread


class MetadataNotFound(Exception):
    """The archive has no *.dist-info/METADATA (not a wheel, or a broken one)."""


def fetch_tail(client: HttpClient, url: str) -> Response:
    """The first request of a lazy read (the zip's last 64 KiB), to start it early."""
    return client.get(
        url.split("#", 1)[0], headers={"Range": f"bytes=-{TAIL_BYTES}"}, max_bytes=MAX_WHEEL
    )


class _RangeFile(io.RawIOBase):
    def __init__(self, client: HttpClient, url: str, tail=None) -> None:
        self.client = client
        self.url = url
        self.pos = 0
        self.chunks: list[tuple[int, bytes]] = []
        self.full: bytes | None = None
        self.ranges_refused = False
        self.size = self._fetch_tail(tail)

    def _fetch_tail(self, answer=None) -> int:
        answer = answer or fetch_tail(self.client, self.url)
        if answer.status == 206:
            match = re.search(r"/(\d+)$", answer.headers.get("content-range", ""))
            if not match:
                raise SourceUnreachable(
                    f"{self.url}: 206 without a Content-Range total", url=self.url
                )
            size = int(match.group(1))
            self.chunks.append((size - len(answer.content), answer.content))
            return size
        if answer.status == 200:
            self.ranges_refused = True
            self.full = answer.content
            return len(answer.content)
        if answer.status == 416:  # a file shorter than the tail: ask for all of it
            return self._fetch_whole()
        raise SourceUnreachable(f"{self.url}: HTTP {answer.status}", url=self.url)

    def _fetch_whole(self) -> int:
        answer = self.client.get(self.url, max_bytes=MAX_WHEEL)
        if answer.status != 200:
            raise SourceUnreachable(f"{self.url}: HTTP {answer.status}", url=self.url)
        self.full = answer.content
        return len(self.full)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.size - self.pos
        end = min(self.size, self.pos + n)
        data = self._bytes(self.pos, end)
        self.pos = end
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _bytes(self, start: int, end: int) -> bytes:
        if start >= end:
            return b""
        if self.full is not None:
            return self.full[start:end]
        for offset, chunk in self.chunks:
            if offset <= start and end <= offset + len(chunk):
                return chunk[start - offset : end - offset]
        fetch_end = min(self.size, max(end, start + MIN_CHUNK))
        answer = self.client.get(
            self.url, headers={"Range": f"bytes={start}-{fetch_end - 1}"}, max_bytes=MAX_WHEEL
        )
        if answer.status == 200:  # the server stopped honouring ranges midway
            self.ranges_refused = True
            self.full = answer.content
            return self.full[start:end]
        if answer.status != 206:
            raise SourceUnreachable(f"{self.url}: HTTP {answer.status} for a range", url=self.url)
        self.chunks.append((start, answer.content))
        return answer.content[: end - start]


def _metadata_from_zip(archive: zipfile.ZipFile) -> bytes:
    names = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
    if not names:
        raise MetadataNotFound("no .dist-info/METADATA in the archive")
    size = archive.getinfo(names[0]).file_size
    if size > MAX_METADATA:
        raise MetadataNotFound(
            f"its {names[0]} is {size / 1e6:.1f} MB, more than lockguard reads "
            f"({MAX_METADATA // 2**20} MB)"
        )
    return archive.read(names[0])


def read_wheel_record(client: HttpClient, url: str) -> tuple[str, ...]:
    """The paths a wheel installs, from its *.dist-info/RECORD, read by the same range requests as
    METADATA (the tail holds the zip's directory, and RECORD is written last, next to it)."""
    try:
        remote = _RangeFile(client, url.split("#", 1)[0])
        with zipfile.ZipFile(remote) as archive:
            names = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n)]
            if not names:
                raise MetadataNotFound("no .dist-info/RECORD in the archive")
            if archive.getinfo(names[0]).file_size > MAX_METADATA:
                raise MetadataNotFound(f"its {names[0]} is larger than lockguard reads")
            text = archive.read(names[0]).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, MetadataNotFound, OSError, ValueError, EOFError) as exc:
        raise SourceUnreachable(
            f"{url} is not a readable wheel: {exc}",
            url=url,
            hint="the index serves a broken file; use another index or mirror",
        ) from None
    return tuple(row[0] for row in csv.reader(text.splitlines()) if row and row[0])


def read_wheel_metadata(
    client: HttpClient, url: str, tail: Response | None = None
) -> tuple[bytes, bool]:
    """The METADATA bytes of the wheel at `url`, and whether the server refused ranges.
    `tail`: the answer of `fetch_tail` when the caller started it already."""
    try:
        if url.startswith("file://"):
            with zipfile.ZipFile(Path(unquote(urlparse(url).path))) as archive:
                return _metadata_from_zip(archive), False
        remote = _RangeFile(client, url.split("#", 1)[0], tail)
        with zipfile.ZipFile(remote) as archive:
            return _metadata_from_zip(archive), remote.ranges_refused
    except (zipfile.BadZipFile, MetadataNotFound, OSError, ValueError, EOFError) as exc:
        raise SourceUnreachable(
            f"{url} is not a readable wheel: {exc}",
            url=url,
            hint="the index serves a broken file; use another index or mirror",
        ) from None
