"""Persistent cache under the user cache dir, with a format version in its folder name.

- metadata of a file is immutable: keyed by the file's sha256, never refetched;
- index pages carry their ETag / Last-Modified and the time they were fetched, so the client can
  revalidate them or serve them within a short TTL (and always when offline).

Writes are atomic (a temporary file per process and thread, then a rename), so concurrent
lockguard processes and threads never see half a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import threading
import time
from pathlib import Path

from lockguard.model.record import record  # not dataclasses: a memoized resolve imports little else

CACHE_FORMAT = "v1"
ENV_CACHE_DIR = "LOCKGUARD_CACHE_DIR"
PAGE_TTL_SECONDS = 600.0  # a page this young is served without asking the index again


def default_cache_dir() -> Path:
    if os.environ.get(ENV_CACHE_DIR):
        return Path(os.environ[ENV_CACHE_DIR])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("lockguard"))


def replace_with(path: Path, data: bytes) -> None:
    """Write a cache file: a temporary name of its own per process and thread, then an atomic
    rename, so a reader sees the old file or the new one, never half of one, without a lock (a
    cold resolve writes hundreds of files; a lock file per write cost more CPU than the writes)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        try:
            tmp.write_bytes(data)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


@record
class CachedPage:
    url: str
    content_type: str
    body: bytes
    etag: str | None
    last_modified: str | None
    fetched_at: float
    body_sha256: str = ""

    def __post_init__(self) -> None:
        if not self.body_sha256:
            self.body_sha256 = hashlib.sha256(self.body).hexdigest()

    def age(self) -> float:
        return time.time() - self.fetched_at


class Cache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or default_cache_dir()) / CACHE_FORMAT
        self.root.mkdir(parents=True, exist_ok=True)

    # -- helpers -------------------------------------------------------------------------------

    def _path(self, kind: str, key: str, suffix: str) -> Path:
        return self.root / kind / key[:2] / f"{key}{suffix}"

    def _write(self, path: Path, data: bytes) -> None:
        replace_with(path, data)

    # -- metadata (immutable, by file sha256) -------------------------------------------------

    def get_metadata(self, file_sha256: str) -> bytes | None:
        path = self._path("metadata", file_sha256, ".METADATA")
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def put_metadata(self, file_sha256: str, data: bytes) -> None:
        self._write(self._path("metadata", file_sha256, ".METADATA"), data)

    # -- index pages (revalidated) -------------------------------------------------------------

    @staticmethod
    def _page_key(url: str) -> str:
        return hashlib.sha256(url.encode()).hexdigest()

    def page_meta_path(self, url: str) -> Path:
        """Where the page of `url` is kept (its metadata half); absent: never fetched."""
        return self._path("pages", self._page_key(url), ".json")

    def get_page(self, url: str) -> CachedPage | None:
        key = self._page_key(url)
        try:
            meta = json.loads(self._path("pages", key, ".json").read_text())
            body = self._path("pages", key, ".body").read_bytes()
        except (FileNotFoundError, ValueError):
            return None
        digest = hashlib.sha256(body).hexdigest()
        if digest != meta.get("body_sha256"):
            return None  # a torn pair from an interrupted write: treat as missing
        return CachedPage(url, meta["content_type"], body, meta.get("etag"), meta.get("last_modified"),
                          meta["fetched_at"], digest)

    def put_page(self, page: CachedPage) -> None:
        key = self._page_key(page.url)
        self._write(self._path("pages", key, ".body"), page.body)
        meta = {"url": page.url, "content_type": page.content_type, "etag": page.etag,
                "last_modified": page.last_modified, "fetched_at": page.fetched_at,
                "body_sha256": page.body_sha256}
        self._write(self._path("pages", key, ".json"), json.dumps(meta).encode())

    def page_state(self, url: str) -> tuple[str, float] | None:
        """(body sha256, fetched at) of the cached page of `url`, from its metadata half alone
        (None: not cached, or its body is gone); `get_page` still verifies the body it reads."""
        key = self._page_key(url)
        try:
            meta = json.loads(self._path("pages", key, ".json").read_text())
            if not self._path("pages", key, ".body").is_file():
                return None
            sha, fetched_at = meta["body_sha256"], meta["fetched_at"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not isinstance(sha, str) or not isinstance(fetched_at, (int, float)):
            return None
        return sha, float(fetched_at)

    def touch_page(self, page: CachedPage) -> None:
        page.fetched_at = time.time()
        self.put_page(page)

    # -- parsed pages (a digest of a page body, so warm runs skip JSON/HTML parsing) ------------

    def get_digest(self, body_sha256: str):
        try:
            return marshal.loads(self._path("digests", body_sha256, ".marshal").read_bytes())
        except (FileNotFoundError, EOFError, ValueError, TypeError):
            return None

    def put_digest(self, body_sha256: str, value) -> None:
        self._write(self._path("digests", body_sha256, ".marshal"), marshal.dumps(value))

    # -- whole resolutions (io/index/resolve_memo.py decides when one still holds) ---------------

    def get_resolution(self, key: str) -> bytes | None:
        try:
            return self._path("resolutions", key, ".json").read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def put_resolution(self, key: str, data: bytes) -> None:
        self._write(self._path("resolutions", key, ".json"), data)
