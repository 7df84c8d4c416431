"""The one adapter around httpx: timeouts, bounded retries with backoff, byte accounting.

Retries cover connection errors, timeouts and 5xx/429 answers; anything else is returned to the
caller. `bytes_fetched` counts body bytes so benchmarks can report what a resolve downloaded.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from lockguard import __version__
from lockguard.errors import SourceUnreachable

RETRY_STATUS = {429, 500, 502, 503, 504}
USER_AGENT = f"lockguard/{__version__}"


@dataclass
class Response:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes

    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


ENV_TIMEOUT = "LOCKGUARD_HTTP_TIMEOUT"
ENV_BACKOFF = "LOCKGUARD_HTTP_BACKOFF"


class HttpClient:
    def __init__(self, *, timeout: float | None = None, retries: int = 3, backoff: float | None = None) -> None:
        import os

        self.timeout = timeout if timeout is not None else float(os.environ.get(ENV_TIMEOUT, "30"))
        self.retries = retries
        self.backoff = backoff if backoff is not None else float(os.environ.get(ENV_BACKOFF, "0.5"))
        self._client = None  # created on the first request: a warm resolve makes none
        self._lock = threading.Lock()
        self.bytes_fetched = 0
        self.requests = 0

    def _http(self):
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                    follow_redirects=True,
                    headers={"User-Agent": USER_AGENT},
                    limits=httpx.Limits(max_connections=64, max_keepalive_connections=32),
                )
            return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, url: str, headers: dict[str, str] | None = None) -> Response:
        """GET with retries. Raises SourceUnreachable when every attempt failed to connect."""
        if url.startswith("file://"):
            return self._get_file(url)
        import httpx

        client = self._http()
        last_error: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * (2 ** (attempt - 1)))
            try:
                answer = client.get(url, headers=headers)
                body = answer.content  # reads the whole body: a truncated one raises here
            except (httpx.TransportError, httpx.DecodingError) as exc:
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            with self._lock:
                self.bytes_fetched += len(body)
                self.requests += 1
            if answer.status_code in RETRY_STATUS and attempt < self.retries:
                last_error = f"HTTP {answer.status_code}"
                continue
            return Response(str(answer.url), answer.status_code, dict(answer.headers), body)
        raise SourceUnreachable(
            f"cannot reach {url} after {self.retries + 1} attempts ({last_error})",
            url=url,
            hint="check the network or the index URL; with a filled cache, --offline resolves without it",
        )

    @staticmethod
    def _get_file(url: str) -> Response:
        from pathlib import Path
        from urllib.parse import unquote, urlparse

        path = Path(unquote(urlparse(url).path))
        if path.is_dir():
            path = path / "index.html"
        try:
            return Response(url, 200, {}, path.read_bytes())
        except FileNotFoundError:
            return Response(url, 404, {}, b"")

