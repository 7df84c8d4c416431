"""Issue 23, item 6: closing the HTTP client never closes a socket a fetch thread still reads.

The intermittent exit 70 (`SyntaxError: unterminated triple-quoted string literal` importing
lockfiles/headers.py during render) came from here: a resolve closed the connection pool while
prefetch threads were still reading their TLS sockets, the kernel handed the freed descriptor
number to the next file the process opened (a module's source, with PYTHONDONTWRITEBYTECODE=1),
and OpenSSL, reading "its" socket, took that file's first bytes. These tests hold a response
half-sent, close the client, open a file, and let the response finish: over TLS, as PyPI is read.
"""

from __future__ import annotations

import http.server
import os
import shutil
import ssl
import subprocess
import threading

import pytest

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient

SOURCE = b'"""A module docstring."""\n\nVALUE = """text"""\n'
BODY = b"x" * 200_000


class _Stalling(http.server.BaseHTTPRequestHandler):
    """Sends half of BODY, waits until the test says go, then sends the rest."""

    protocol_version = "HTTP/1.1"
    halfway = threading.Event()
    go = threading.Event()

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        half = len(BODY) // 2
        self.wfile.write(BODY[:half])
        self.wfile.flush()
        type(self).halfway.set()
        type(self).go.wait(30)
        self.wfile.write(BODY[half:])
        self.wfile.flush()

    def log_message(self, *args):
        pass


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # httpx trusts it (trust_env)
    _Stalling.halfway.clear()
    _Stalling.go.clear()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}/file"
    _Stalling.go.set()
    server.shutdown()
    server.server_close()


def test_a_request_in_flight_finishes_and_no_file_opened_meanwhile_loses_bytes(
    tls_server, tmp_path
):
    module = tmp_path / "module.py"
    module.write_bytes(SOURCE)
    client = HttpClient(retries=0)
    answer: dict = {}

    def fetch():
        try:
            answer["response"] = client.get(tls_server)
        except BaseException as exc:  # noqa: BLE001 (the test reports it)
            answer["error"] = exc

    worker = threading.Thread(target=fetch)
    worker.start()
    assert _Stalling.halfway.wait(30), "the server never sent the first half"
    client.close()  # the resolve is over; the fetch thread is still reading its socket
    fd = os.open(module, os.O_RDONLY)  # what an import does next; may get the socket's old number
    try:
        _Stalling.go.set()
        worker.join(30)
        assert not worker.is_alive()
        read = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    assert read == SOURCE  # no byte of the file was read by the fetch thread's TLS layer
    assert "error" not in answer, answer.get("error")
    assert answer["response"].status == 200 and answer["response"].content == BODY
    with pytest.raises(SourceUnreachable, match="the HTTP client was closed"):
        client.get(tls_server)  # after close, nothing new starts
    assert client._client is None  # the last request in flight closed the pool


def test_close_with_nothing_in_flight_closes_at_once():
    client = HttpClient()
    client.prepare()
    pool = client._client
    client.close()
    assert client._client is None and pool.is_closed
    with pytest.raises(SourceUnreachable, match="the HTTP client was closed"):
        client.get("http://127.0.0.1:9/never")
