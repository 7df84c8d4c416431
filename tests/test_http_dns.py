"""Issue 31 §1: one DNS lookup per host per run, a bound on requests per host, connection reuse.

A cold resolve opened up to 64 connections at once, each with its own lookup, and a resolver that
drops a burst of lookups cost 5 s per dropped one. The servers here listen on 127.0.0.1 and are
reached through host names only the tests' lookup function knows (the HostMemo's injected
resolver), which counts the lookups.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import certifi
import pytest

from lockguard.errors import EXIT_UNREACHABLE, SourceUnreachable
from lockguard.io.index import http as index_http
from lockguard.io.index.host_memo import HostMemo
from lockguard.io.index.http import HttpClient


class _Counting(http.server.BaseHTTPRequestHandler):
    """Answers every GET after `delay` s; counts connections and the requests in progress."""

    protocol_version = "HTTP/1.1"  # keep-alive: a connection serves many requests
    delay = 0.0
    guard = threading.Lock()
    now = 0
    most = 0
    connections = 0
    paths: list[str] = []

    def setup(self):
        super().setup()
        with self.guard:
            type(self).connections += 1

    def do_GET(self):  # noqa: N802 (http.server's name)
        cls = type(self)
        with cls.guard:
            cls.now += 1
            cls.most = max(cls.most, cls.now)
            cls.paths.append(self.path)
        time.sleep(cls.delay)
        with cls.guard:
            cls.now -= 1
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Counting.delay, _Counting.now, _Counting.most, _Counting.connections = 0.0, 0, 0, 0
    _Counting.paths = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


class Lookups:
    """A getaddrinfo for the tests' host names: each known name is 127.0.0.1; counts the calls per
    host, and takes `delay` s, so that concurrent first requests overlap the lookup."""

    def __init__(self, known: set[str], delay: float = 0.2) -> None:
        self.known = known
        self.delay = delay
        self.calls: dict[str, int] = {}
        self.guard = threading.Lock()

    def __call__(self, host, port, family=0, type=0):  # noqa: A002 (getaddrinfo's names)
        with self.guard:
            self.calls[host] = self.calls.get(host, 0) + 1
        time.sleep(self.delay)
        if host not in self.known:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]


def _get_all(client: HttpClient, urls: list[str]) -> list[int]:
    with ThreadPoolExecutor(len(urls)) as pool:
        return [answer.status for answer in pool.map(client.get, urls)]


def test_thirty_concurrent_requests_to_one_host_make_one_lookup(server, monkeypatch):
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    lookups = Lookups({"index.test", "mirror.test"})
    client = HttpClient(hosts=HostMemo(lookups), http2=False)
    try:
        urls = [f"http://index.test:{server}/simple/p{i}/" for i in range(30)]
        assert _get_all(client, urls) == [200] * 30
        assert lookups.calls == {"index.test": 1}
        # a second host: one more lookup, the first host's answer is reused
        urls = [f"http://mirror.test:{server}/simple/p{i}/" for i in range(10)]
        urls += [f"http://index.test:{server}/simple/q{i}/" for i in range(10)]
        assert _get_all(client, urls) == [200] * 20
        assert lookups.calls == {"index.test": 1, "mirror.test": 1}
    finally:
        client.close()


def test_every_client_of_the_run_shares_the_memo(server):
    # io/index/early.py's client and the resolve's: one lookup per host between them
    lookups = Lookups({"index.test"}, delay=0)
    memo = HostMemo(lookups)
    for _ in range(2):
        with HttpClient(hosts=memo, http2=False) as client:
            assert client.get(f"http://index.test:{server}/a").status == 200
    assert lookups.calls == {"index.test": 1}


def test_the_clients_of_a_run_load_the_ca_bundle_once(monkeypatch, tmp_path):
    # ~22 ms of CPU per load, and a resolve makes two clients (bench/RESULTS.md, issue 31)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setattr(index_http, "_TLS_CONTEXTS", {}, raising=False)
    made = []
    real = index_http.httpx.create_ssl_context

    def counting(*args, **kwargs):
        made.append(os.environ.get("SSL_CERT_FILE"))
        return real(*args, **kwargs)

    monkeypatch.setattr(index_http.httpx, "create_ssl_context", counting)
    for _ in range(2):
        with HttpClient(http2=False) as client:
            client.prepare()
    assert made == [None]
    # another trust setting is another context (tests trust their own certificate this way)
    cert = tmp_path / "cert.pem"
    cert.write_text(Path(certifi.where()).read_text())
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with HttpClient(http2=False) as client:
        client.prepare()
    assert made == [None, str(cert)]


def test_a_name_that_does_not_resolve_is_unreachable_once_per_run(server):
    # the lookup's failure is memoised for the run, like a host that could not be connected to
    # (`_down`): no retries (the system resolver retried already), no second lookup
    lookups = Lookups({"index.test"}, delay=0)
    memo = HostMemo(lookups)
    client = HttpClient(hosts=memo, backoff=5.0, http2=False)
    try:
        started = time.monotonic()
        with pytest.raises(SourceUnreachable, match="cannot resolve nowhere.test") as caught:
            client.get(f"http://nowhere.test:{server}/simple/a/")
        assert caught.value.exit_code == EXIT_UNREACHABLE == 4
        assert "Unresolved" not in str(caught.value)  # no class name of ours in the message
        assert "nowhere.test" in str(caught.value.url)
        assert time.monotonic() - started < 2.0  # no backoff of 5 s: not retried
        with pytest.raises(SourceUnreachable, match="nowhere.test"):
            client.get(f"http://nowhere.test:{server}/simple/b/")
        with HttpClient(hosts=memo, http2=False) as other, pytest.raises(SourceUnreachable):
            other.get(f"http://nowhere.test:{server}/simple/c/")  # the run's other client
        assert lookups.calls == {"nowhere.test": 1}
        # the other host is unaffected
        assert client.get(f"http://index.test:{server}/simple/a/").status == 200
    finally:
        client.close()


def test_requests_per_host_are_bounded_and_connections_reused(server):
    _Counting.delay = 0.1
    client = HttpClient(hosts=HostMemo(Lookups({"index.test"}, delay=0)), per_host=4, http2=False)
    try:
        urls = [f"http://index.test:{server}/simple/p{i}/" for i in range(40)]
        assert _get_all(client, urls) == [200] * 40
    finally:
        client.close()
    assert _Counting.most == 4  # the bound, reached and never passed
    assert _Counting.connections <= 4  # keep-alive: 40 requests over the bound's connections


def test_through_a_proxy_httpx_handles_it_and_the_proxy_resolves(server, monkeypatch):
    # HTTP_PROXY: httpx's own proxy transport (trust_env); the memo is for direct connections
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    lookups = Lookups(set(), delay=0)
    with HttpClient(hosts=HostMemo(lookups), http2=False) as client:
        assert client.get("http://index.test/simple/a/").status == 200
    assert lookups.calls == {}
    assert _Counting.paths == ["http://index.test/simple/a/"]  # the proxy got the name


@pytest.fixture
def tls_index(tmp_path, monkeypatch):
    """An HTTPS server on 127.0.0.1 whose certificate names index.test only."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key)]
        + ["-out", str(cert), "-days", "1", "-subj", "/CN=index.test"]
        + ["-addext", "subjectAltName=DNS:index.test"],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted as httpx's own transport does
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_tls_checks_the_host_name_not_the_address(tls_index):
    lookups = Lookups({"index.test", "other.test"}, delay=0)
    client = HttpClient(hosts=HostMemo(lookups), retries=0, http2=False)
    try:
        # connected to 127.0.0.1, verified as index.test (SNI and the certificate's name)
        assert client.get(f"https://index.test:{tls_index}/simple/a/").status == 200
        # the same address under a name the certificate does not carry is refused
        with pytest.raises(SourceUnreachable, match="(?i)certificate|hostname"):
            client.get(f"https://other.test:{tls_index}/simple/a/")
    finally:
        client.close()


@pytest.fixture
def h2_index(tmp_path, monkeypatch):
    """An HTTP/2-only server (TLS, ALPN "h2") on 127.0.0.1 for index.test; counts connections."""
    pytest.importorskip("h2")
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key)]
        + ["-out", str(cert), "-days", "1", "-subj", "/CN=index.test"]
        + ["-addext", "subjectAltName=DNS:index.test"],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    connections: list[str | None] = []

    def serve(raw: socket.socket) -> None:
        try:
            with context.wrap_socket(raw, server_side=True) as tls:
                connections.append(tls.selected_alpn_protocol())
                conn = h2.connection.H2Connection(
                    config=h2.config.H2Configuration(client_side=False)
                )
                conn.initiate_connection()
                tls.sendall(conn.data_to_send())
                while data := tls.recv(65535):
                    for event in conn.receive_data(data):
                        if isinstance(event, h2.events.RequestReceived):
                            headers = [(":status", "200"), ("content-length", "2")]
                            conn.send_headers(event.stream_id, headers)
                            conn.send_data(event.stream_id, b"ok", end_stream=True)
                    tls.sendall(conn.data_to_send())
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass  # a client that does not speak HTTP/2: the test sees no answer

    def accept() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(raw,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1], connections
    listener.close()


def test_http2_when_asked_for_multiplexes_one_connection(h2_index, monkeypatch):
    # LOCKGUARD_HTTP2=1 (not the default: http2_wanted says why) with h2 installed
    monkeypatch.setenv("LOCKGUARD_HTTP2", "1")
    port, connections = h2_index
    client = HttpClient(hosts=HostMemo(Lookups({"index.test"}, delay=0)), retries=0)
    try:
        assert client.http2
        urls = [f"https://index.test:{port}/simple/p{i}/" for i in range(20)]
        assert _get_all(client, urls) == [200] * 20
    finally:
        client.close()
    assert connections == ["h2"]  # 20 requests, one connection


def test_http1_by_default(monkeypatch):
    monkeypatch.delenv("LOCKGUARD_HTTP2", raising=False)
    assert not HttpClient().http2


@pytest.mark.parametrize(
    "name, value", [("LOCKGUARD_HTTP_TIMEOUT", "abc"), ("LOCKGUARD_HTTP_PER_HOST", "0")]
)
def test_a_setting_that_is_not_a_number_is_bad_input(lg_process, tmp_path, name, value):
    (tmp_path / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "none"\nchannels = []\npip = ["jinja2"]\n'
        'indexes = ["http://127.0.0.1:9/simple"]\n'
    )
    result = lg_process("resolve", cwd=tmp_path, env={name: value})
    assert result.exit_code == 2 and f"{name}={value!r} is not a positive" in result.stderr
    assert "Traceback" not in result.stderr
