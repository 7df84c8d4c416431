"""The one adapter around httpx: bounded time and size per request, bounded retries,
byte accounting.

Every GET has a connect timeout, an idle-read timeout and an overall deadline past which the
answer must keep arriving at MIN_RATE (a server that trickles bytes cannot hold a resolve; a big
sdist on a good link is fine), and a size limit (an endless body is cut off). Connection
errors and 5xx/429 answers are retried with backoff, a timeout once; a host that could not be
connected to at all is not asked again in this session, so an unreachable PyTorch index costs one
failure, not one per variant page. `bytes_fetched` counts body bytes so benchmarks can report what a
resolve downloaded.

The answer's head (connect, TLS, the status line and headers, redirects) must be complete within
the timeout of the request's start, whatever trickles in meanwhile: httpx's timeouts are per socket
operation, so a server sending one header byte every 2 s never trips them (issue 30: a resolve ran
past 420 s). httpx has no public way to interrupt a request from another thread before it has a
response, so the head is awaited in a short-lived daemon thread (`_head`) while the caller waits on
the clock; a late head is given up (that thread closes the answer if it ever comes, and counts as
in flight until then: the note below). The body is read in the caller's thread, where each chunk
is checked against the deadline (a read that waits longer than the timeout fails by itself). Only
public httpx API is used (`build_request`, `send(stream=True)`, the `trace` request extension, which
tells a head given up while its connection was still being made: that host is out of reach). A
custom transport would not interrupt it either: it blocks where httpx's does.

Connections (issue 31): a cold resolve's 48 prefetch workers ask two or three hosts at once, and
each new connection looked its host name up again; a resolver that drops a burst of lookups costs
5 s per dropped one. So direct connections go through `_DirectTransport`, httpx's own HTTPTransport
mirrored over public httpx/httpcore names (the same request mapping, the same error mapping) with
a network backend that looks each host up once per run (io/index/host_memo.py); at most PER_HOST
requests go to one host at once, over kept-alive connections (HTTP/1.1; HTTP/2 with
LOCKGUARD_HTTP2=1, measured no faster: `http2_wanted`). With HTTP(S)_PROXY/ALL_PROXY set,
httpx's own proxy transports run as before (a transport of lockguard's own would switch
trust_env's proxies off) and the proxy looks the names up: the memo is for direct connections.
The `trace` extension reaches httpcore through the request's extensions, as with httpx's
transport.

`close()` never closes a connection a request is still reading from: fetch threads (prefetches
nobody waits for any more) may still be in `get` when a resolve ends, and a socket closed under
them frees its descriptor number while OpenSSL in that thread goes on reading "its" socket, now
whatever file the process opens next under that number. Render's imports opened lockguard's own
sources there and lost their first bytes to it (issue 23: `SyntaxError: unterminated
triple-quoted string literal` importing lockfiles/headers.py). So the connection pool is closed by
whichever comes last: `close()`, or the last request in flight; a request after `close()` fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse, urlsplit

import httpcore
import httpx

from lockguard import __version__
from lockguard.errors import SourceUnreachable
from lockguard.io.index.host_memo import PROCESS_HOSTS, HostMemo, MemoBackend, UnresolvedHost
from lockguard.io.index.http_settings import ENV_TIMEOUT, env_setting, request_timeout

RETRY_STATUS = {429, 500, 502, 503, 504}
USER_AGENT = f"lockguard/{__version__}"
ENV_BACKOFF = "LOCKGUARD_HTTP_BACKOFF"
ENV_HTTP2 = "LOCKGUARD_HTTP2"  # "1": offer HTTP/2 (http2_wanted says why not by default)
CONNECT_TIMEOUT = 5.0
DEADLINE_FACTOR = 6  # past this many idle timeouts an answer must keep arriving at MIN_RATE
MIN_RATE = 256 * 1024  # bytes per second: a big download may take long, a trickle may not
ENV_MIN_RATE = "LOCKGUARD_HTTP_MIN_RATE"  # bytes per second (tests make a slow server "slow")
MAX_BODY = 256 * 1024 * 1024  # the largest answer read by default (pages, sdists)
MAX_REDIRECTS = 10
# requests in flight per host at once (LOCKGUARD_HTTP_PER_HOST changes it). lockguard's prefetch
# runs 48 workers, nearly all asking pypi.org or files.pythonhosted.org; unbounded, a cold resolve
# opened up to 64 connections at once, each with its TCP and TLS handshake (and, before
# host_memo.py, its DNS lookup). uv bounds its downloads at 50 (UV_CONCURRENT_DOWNLOADS), pip
# fetches one page at a time. 4 to 48 per host measured the same wall time on a mirror a few ms
# away, where a cold resolve is CPU-bound (bench/RESULTS.md, "http steps"); 16 keeps a burst to 16
# connections per host and still hides a far index's round trips behind one another
PER_HOST = 16
ENV_PER_HOST = "LOCKGUARD_HTTP_PER_HOST"
MAX_CONNECTIONS = 64  # all hosts together (PyPI's two, the PyTorch index, an extra index)
KEEPALIVE_EXPIRY = 5.0  # httpx's default


class AnswerTooLarge(SourceUnreachable):
    """An answer larger than the caller's limit (not read past it): the file is broken, the index
    answered."""


@dataclass
class Response:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes

    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class Sink(Protocol):
    """Where a download's body goes as it arrives (HttpClient.get's `sink`)."""

    def restart(self, declared: int | None) -> None:
        """A new attempt begins (what an earlier one wrote is void); `declared`: its
        Content-Length."""
        ...

    def write(self, chunk: bytes) -> None: ...


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    pass


class _Closed(Exception):
    pass


class _NoHead(Exception):
    """The status line and headers did not all arrive within the timeout; `connecting`: the
    connection (TCP, TLS) itself was not made by then, which says the host is out of reach."""

    def __init__(self, connecting: bool) -> None:
        super().__init__()
        self.connecting = connecting


class _HeadSlot:
    """The hand-over between a request's head thread and the caller waiting for it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.answer: httpx.Response | None = None
        self.error: BaseException | None = None
        self.abandoned = False  # the caller stopped waiting: a late answer is closed unread
        self.connecting = False  # between the start and the end of a TCP connect or TLS handshake

    def trace(self, event: str, _info: dict) -> None:
        """httpx's `trace` request extension: where the request is (a connection being made, or
        not), for telling a host out of reach from one that is slow to answer."""
        if event.endswith(("connect_tcp.started", "start_tls.started")):
            self.connecting = True
        elif event.endswith(("connect_tcp.complete", "start_tls.complete")):
            self.connecting = False


class _Unresolved(httpx.ConnectError):
    """The host name did not resolve (host_memo.UnresolvedHost): not retried, the lookup's failure
    is memoised for the run."""


# httpcore's errors as httpx's (httpx's HTTPTransport maps them the same way), the most specific
# first: the first match wins
_ERRORS: list[tuple[type[Exception], type[httpx.HTTPError]]] = [
    (UnresolvedHost, _Unresolved),
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
]


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, ours in _ERRORS:
            if isinstance(exc, core):
                raise ours(str(exc)) from exc
        raise


class _Body(httpx.SyncByteStream):
    """An answer's body from httpcore, its errors raised as httpx's."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


_TLS_LOCK = threading.Lock()
_TLS_CONTEXTS: dict[tuple[str | None, str | None, bool], ssl.SSLContext] = {}


def _tls_context(http2: bool) -> ssl.SSLContext:
    """One TLS context per process and trust setting: loading the CA bundle costs ~22 ms of CPU
    and a resolve makes two clients (issue 31 §1). One per `http2` too: httpcore sets the ALPN
    protocols on the context it is given."""
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"), http2)
    with _TLS_LOCK:
        if key not in _TLS_CONTEXTS:
            # SSL_CERT_FILE / SSL_CERT_DIR, as httpx's own transport reads them
            _TLS_CONTEXTS[key] = httpx.create_ssl_context()
        return _TLS_CONTEXTS[key]


class _DirectTransport(httpx.BaseTransport):
    """httpx's own HTTPTransport for direct connections (the same request and answer mapping, the
    same errors), over a connection pool whose connections look each host up once per run
    (io/index/host_memo.py). Request extensions (`trace`, `timeout`) pass through to httpcore."""

    def __init__(self, hosts: HostMemo, *, http2: bool) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=_tls_context(http2),
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_CONNECTIONS,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            http1=True,
            http2=http2,
            network_backend=MemoBackend(hosts),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,  # a SyncByteStream: bytes chunks
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            answer = self._pool.handle_request(core)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        with _as_httpx_errors():
            self._pool.close()


def http2_wanted() -> bool:
    """HTTP/2 is offered to servers only with LOCKGUARD_HTTP2=1 and the h2 package importable: a
    cold resolve was not faster with it than over PER_HOST kept-alive HTTP/1.1 connections (2-4%
    slower over 8 rounds, mixed over 5 more: bench/RESULTS.md, "http steps"), so it is not the
    default and h2 is not a dependency."""
    if os.environ.get(ENV_HTTP2, "0") != "1":
        return False
    return importlib.util.find_spec("h2") is not None


def _proxied() -> bool:
    """An HTTP(S)_PROXY / ALL_PROXY is set: httpx's own transports (with trust_env) handle it."""
    proxies = urllib.request.getproxies()
    return any(proxies.get(scheme) for scheme in ("http", "https", "all"))


class HttpClient:
    def __init__(
        self,
        *,
        timeout: float | None = None,
        retries: int = 3,
        backoff: float | None = None,
        hosts: HostMemo | None = None,
        per_host: int | None = None,
        http2: bool | None = None,
    ) -> None:
        self.timeout = timeout if timeout is not None else request_timeout()
        self.deadline = self.timeout * DEADLINE_FACTOR
        self.min_rate = env_setting(ENV_MIN_RATE, MIN_RATE, int)
        self.retries = retries
        self.backoff = (
            backoff if backoff is not None else env_setting(ENV_BACKOFF, 0.5, float, zero=True)
        )
        # created on the first request: a warm resolve makes none
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._in_flight = 0  # requests between their start and their end (see the module's note)
        self._closed = False
        self._down: dict[str, str] = {}  # host -> why every attempt failed
        self.hosts = hosts if hosts is not None else PROCESS_HOSTS
        self.per_host = per_host or env_setting(ENV_PER_HOST, PER_HOST, int)
        self._slots: dict[str, threading.BoundedSemaphore] = {}  # host -> its PER_HOST slots
        self.http2 = http2 if http2 is not None else http2_wanted()
        self.bytes_fetched = 0
        self.requests = 0

    def _http(self):
        with self._lock:
            if self._client is None:
                # a closed pool is never made again (a request in flight keeps it open)
                if self._closed:
                    raise _Closed()
                # through a proxy the proxy looks the names up: httpx's own transports then
                # (a transport of our own would switch off trust_env's proxies)
                direct = None if _proxied() else _DirectTransport(self.hosts, http2=self.http2)
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT)),
                    follow_redirects=True,
                    max_redirects=MAX_REDIRECTS,
                    headers={"User-Agent": USER_AGENT},
                    limits=httpx.Limits(
                        max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS
                    ),
                    http2=self.http2,
                    transport=direct,
                )
            return self._client

    def prepare(self) -> None:
        """Import httpx and build its connection pool now, in the calling thread (io/index/early.py
        says why threads must not be the first to import it)."""
        self._http()

    def close(self) -> None:
        """Close the connection pool now if no request is in flight, else once the last one ends."""
        with self._lock:
            self._closed = True
            idle = self._client if self._in_flight == 0 else None
            if idle is not None:
                self._client = None
        if idle is not None:
            idle.close()

    @property
    def in_flight(self) -> int:
        """Requests between their start and their end now."""
        with self._lock:
            return self._in_flight

    def _request_started(self) -> None:
        with self._lock:
            if self._closed:
                raise _Closed()
            self._in_flight += 1

    def _request_ended(self) -> None:
        with self._lock:
            self._in_flight -= 1
            last = self._client if self._closed and self._in_flight == 0 else None
            if last is not None:
                self._client = None
        if last is not None:
            last.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        max_bytes: int = MAX_BODY,
        sink: Sink | None = None,
    ) -> Response:
        """GET with retries. Raises SourceUnreachable when the server cannot be reached, does not
        answer in time, or answers with more than `max_bytes`. With a `sink` the body goes there
        as it arrives (a download: restarted on each attempt) and the Response's content is
        empty."""
        if url.startswith("file://"):
            return self._get_file(url, max_bytes)
        host = urlsplit(url).netloc
        if host in self._down:
            raise SourceUnreachable(
                f"cannot reach {url}: {self._down[host]}", url=url, hint=self._hint()
            )
        try:
            self._request_started()
            try:
                with self._slot(host):
                    return self._get(url, headers, host, max_bytes, sink)
            finally:
                self._request_ended()
        except _Closed:
            raise SourceUnreachable(
                f"{url}: not fetched, the HTTP client was closed", url=url
            ) from None

    def _slot(self, host: str) -> threading.BoundedSemaphore:
        """The host's semaphore: at most `per_host` requests to it at once (PER_HOST says why)."""
        with self._lock:
            slot = self._slots.get(host)
            if slot is None:
                slot = self._slots[host] = threading.BoundedSemaphore(self.per_host)
            return slot

    def _get(
        self,
        url: str,
        headers: dict[str, str] | None,
        host: str,
        max_bytes: int,
        sink: Sink | None = None,
    ) -> Response:
        client = self._http()
        last_error = ""
        timeouts = 0
        # no connection at all (DNS, refused, connect timeout): the host is down
        unreachable = False
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * (2 ** (attempt - 1)))
            try:
                answer, body, size = self._once(client, url, headers, max_bytes, sink)
            except (_TooSlow, _NoHead, httpx.TimeoutException) as exc:
                timeouts += 1
                # no connection at all, not a slow answer: the host is out of reach
                unreachable = isinstance(exc, httpx.ConnectTimeout) or (
                    isinstance(exc, _NoHead) and exc.connecting
                )
                last_error = (
                    f"no complete answer within {self.deadline:.0f} s (it came slower than "
                    f"{self.min_rate // 1024} kB/s)"
                    if isinstance(exc, _TooSlow)
                    else f"no answer within {self.timeout:.0f} s"
                )
                if timeouts >= 2:
                    # a timeout is retried once: an index that never answers must not cost minutes
                    break
                continue
            except _TooLarge:
                raise AnswerTooLarge(
                    f"{url}: the answer is larger than {max_bytes // 2**20} MB; lockguard stopped "
                    "reading it",
                    url=url,
                    hint="the index serves a broken or endless file",
                ) from None
            except httpx.TooManyRedirects:
                raise SourceUnreachable(
                    f"{url}: more than {MAX_REDIRECTS} redirects (a loop, or a longer chain than "
                    "lockguard follows)",
                    url=url,
                    hint="check the index URL in the intent",
                ) from None
            except (
                httpx.TransportError,
                httpx.DecodingError,
                httpx.InvalidURL,
                httpx.UnsupportedProtocol,
            ) as exc:
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if isinstance(exc, _Unresolved):  # "cannot resolve HOST: why" says it all
                    last_error = str(exc)
                unreachable = isinstance(exc, httpx.ConnectError)
                # a name that did not resolve is memoised for the run: asking again is no retry
                if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol, _Unresolved)):
                    break
                continue
            with self._lock:
                self.bytes_fetched += size
                self.requests += 1
            if answer.status_code in RETRY_STATUS and attempt < self.retries:
                last_error = f"HTTP {answer.status_code}"
                continue
            return Response(str(answer.url), answer.status_code, dict(answer.headers), body)
        attempts = attempt + 1
        reason = f"{last_error} ({attempts} attempt{'s' if attempts > 1 else ''})"
        if unreachable:  # a slow answer is this request's problem; no connection is the host's
            with self._lock:
                self._down.setdefault(host, reason)
        raise SourceUnreachable(f"cannot reach {url}: {reason}", url=url, hint=self._hint())

    def _once(
        self,
        client,
        url: str,
        headers: dict[str, str] | None,
        max_bytes: int,
        sink: Sink | None = None,
    ):
        started = time.monotonic()
        answer = self._head(client, url, headers, started)
        try:
            declared = answer.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise _TooLarge()
            chunks: list[bytes] = []
            size = 0
            keep = chunks.append
            if sink is not None:
                sink.restart(int(declared) if declared.isdigit() else None)
                keep = sink.write if answer.status_code == 200 else keep
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise _TooLarge()
                elapsed = time.monotonic() - started
                if elapsed > self.deadline and size / elapsed < self.min_rate:
                    raise _TooSlow()
                keep(chunk)
            return answer, b"".join(chunks), size
        finally:
            answer.close()

    def _head(
        self, client, url: str, headers: dict[str, str] | None, started: float
    ) -> httpx.Response:
        """The answer with its status line and headers, once they have all arrived, within the
        timeout of `started` (the module's note says why in another thread); _NoHead if not."""
        slot = _HeadSlot()
        request = client.build_request(
            "GET", url, headers=headers, extensions={"trace": slot.trace}
        )
        with self._lock:
            self._in_flight += 1  # the head thread's own: the pool stays open while it reads
        thread = threading.Thread(
            target=self._send, args=(client, request, slot), name="lockguard-http", daemon=True
        )
        thread.start()
        try:
            slot.done.wait(max(0.0, self.timeout - (time.monotonic() - started)))
        except BaseException:  # Ctrl-C while waiting: the answer, now or later, is closed unread
            with slot.lock:
                slot.abandoned = True
                answer, slot.answer = slot.answer, None
            if answer is not None:
                answer.close()
            raise
        with slot.lock:
            answer, error = slot.answer, slot.error
            slot.abandoned = answer is None and error is None
        if error is not None:
            raise error
        if answer is None:
            raise _NoHead(slot.connecting)
        return answer

    def _send(self, client, request: httpx.Request, slot: _HeadSlot) -> None:
        """The head thread: sends the request and hands over the answer, or closes it when the
        caller has given up on it."""
        try:
            answer = client.send(request, stream=True)
        except BaseException as exc:  # handed to the caller, who raises it as its own
            with slot.lock:
                slot.error = exc
        else:
            with slot.lock:
                late = slot.abandoned
                if not late:
                    slot.answer = answer
            if late:
                answer.close()
        finally:
            slot.done.set()
            self._request_ended()

    def _hint(self) -> str:
        return (
            f"check the network or the index URL (each request waits {self.timeout:.0f} s for an "
            f"answer; {ENV_TIMEOUT}=SECONDS waits longer); with a filled cache, --offline resolves "
            "without it"
        )

    @staticmethod
    def _get_file(url: str, max_bytes: int) -> Response:
        path = Path(unquote(urlparse(url).path))
        if path.is_dir():
            path = path / "index.html"
        try:
            if not path.is_file():
                return Response(url, 404, {}, b"")
            if path.stat().st_size > max_bytes:
                raise SourceUnreachable(f"{path} is larger than {max_bytes // 2**20} MB", url=url)
            return Response(url, 200, {}, path.read_bytes())
        except FileNotFoundError:
            return Response(url, 404, {}, b"")
