"""A local simple index on 127.0.0.1 for tests: PEP 691 JSON and PEP 503 HTML project pages,
files with HTTP range requests, PEP 658 metadata, and switches for the failures a real index has
(ranges refused, a 500 then success, a slow answer, a truncated body) and for a misbehaving one
(a page or a .metadata file replaced by garbage, a connection that never answers, headers or a
body that trickle, a body that never ends, a redirect loop, a catch-all mirror)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import urllib.parse
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename


@dataclass
class Faults:
    refuse_ranges: bool = False
    serve_json: bool = True
    serve_metadata: bool = False  # PEP 658 .metadata files
    advertise_metadata: bool = True  # mention core-metadata in the page when serving it
    fail_once: dict[str, int] = field(default_factory=dict)  # path -> status, answered once
    delay: dict[str, float] = field(default_factory=dict)  # path prefix -> seconds
    delay_once: dict[str, float] = field(default_factory=dict)  # path -> seconds, for one request
    truncate_once: set[str] = field(default_factory=set)  # paths whose next body is cut short
    etag: bool = True
    # misbehaving modes, by path prefix
    # path -> (content type, body)
    replace: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    # wheel name -> its (advertised) .metadata
    metadata_body: dict[str, bytes] = field(default_factory=dict)
    hang: set[str] = field(default_factory=set)  # accept, read the request, never answer
    trickle: set[str] = field(default_factory=set)  # headers, then a byte every 0.3 s, for ever
    # the status line and headers themselves, a byte every trickle_head_delay s, never complete
    trickle_head: set[str] = field(default_factory=set)
    trickle_head_delay: float = 0.5
    catch_all: bool = False  # 200 with an HTML page for every path it has nothing for
    endless: set[str] = field(default_factory=set)  # a body that never ends (no Content-Length)
    redirect_loop: set[str] = field(default_factory=set)  # 302 to itself
    # path prefix -> an HTTP status, every time
    status: dict[str, int] = field(default_factory=dict)


class LocalIndex:
    """`mount` is where project pages live (/simple/<name>/). With `variants=True` the mount holds
    one index per folder, like download.pytorch.org/whl/<variant>/<name>/."""

    def __init__(self, root: Path, mount: str = "/simple", variants: bool = False) -> None:
        self.mount = mount
        self.variants = variants
        self.root = Path(root)
        self.files_dir = self.root / "files"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.faults = Faults()
        self.yanked: set[str] = set()
        self.yank_reasons: dict[str, str] = {}  # filename -> the reason PEP 691 / 592 pages give
        self.upload_times: dict[str, str] = {}
        self.requests: list[tuple[str, str, str]] = []  # (method, path, range)
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    # -- content -----------------------------------------------------------------------------

    def add(
        self, path: Path, *, yanked: bool = False, upload_time: str | None = None, variant: str = ""
    ) -> Path:
        folder = self.files_dir / variant if variant else self.files_dir
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / Path(path).name
        if Path(path).resolve() != target.resolve():
            target.write_bytes(Path(path).read_bytes())
        if yanked:
            self.yanked.add(target.name)
        if upload_time:
            self.upload_times[target.name] = upload_time
        return target

    def _project_files(self, project: str, variant: str = "") -> list[Path]:
        out = []
        folder = self.files_dir / variant if variant else self.files_dir
        if not folder.is_dir():
            return []
        for item in sorted(folder.iterdir()):
            if item.is_dir():
                continue
            name = _project_of(item.name)
            if name and canonicalize_name(name) == canonicalize_name(project):
                out.append(item)
        return out

    def _metadata_of(self, wheel: Path) -> bytes | None:
        if not wheel.name.endswith(".whl"):
            return None
        with zipfile.ZipFile(wheel) as archive:
            names = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
            return archive.read(names[0]) if names else None

    # -- server ------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.mount}"

    def start(self) -> LocalIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                index._handle(self)

            def do_HEAD(self):
                index._handle(self, head=True)

        class QuietServer(ThreadingHTTPServer):
            # socketserver's 5 drops the SYNs of concurrent resolves' bursts (1-3 s retransmits)
            request_queue_size = 256

            def handle_error(self, request, client_address):
                pass  # clients abandon requests on purpose (raced .metadata probes): not an error

        self._server = QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.bytes_sent = 0

    def _handle(self, req: BaseHTTPRequestHandler, head: bool = False) -> None:
        path = req.path.split("?", 1)[0]
        with self._lock:
            self.requests.append((req.command, path, req.headers.get("Range", "")))
        for prefix, seconds in self.faults.delay.items():
            if path.startswith(prefix):
                time.sleep(seconds)
        once = self.faults.delay_once.pop(path, None)
        if once:
            time.sleep(once)
        status = self.faults.fail_once.pop(path, None)
        if status:
            return self._send(req, status, b"injected failure", "text/plain", head=head)
        if self._misbehave(req, path):
            return
        if path in self.faults.replace:
            content_type, body = self.faults.replace[path]
            return self._send(req, 200, body, content_type, head=head)
        if path.startswith(self.mount + "/"):
            return self._page(req, path, head)
        if path.startswith("/files/"):
            return self._file(req, path[len("/files/") :], head)
        self._send(req, 404, b"not found", "text/plain", head=head)

    def _misbehave(self, req, path: str) -> bool:
        """The hostile modes; True when the request was handled (or abandoned) here."""

        def matches(prefixes: set[str]) -> bool:
            return any(path.startswith(p) for p in prefixes)

        try:
            code = next((c for p, c in self.faults.status.items() if path.startswith(p)), None)
            if code is not None:
                self._send(req, code, b"go away", "text/plain")
                return True
            if matches(self.faults.hang):
                while self._server is not None and not self._stopped.is_set():
                    self._stopped.wait(0.2)
                return True
            if matches(self.faults.redirect_loop):
                req.send_response(302)
                req.send_header("Location", path)
                req.send_header("Content-Length", "0")
                req.end_headers()
                return True
            if matches(self.faults.trickle_head):
                head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: " + b"y" * 65536
                for i in range(len(head)):
                    if self._stopped.is_set():
                        break
                    req.wfile.write(head[i : i + 1])
                    req.wfile.flush()
                    self._stopped.wait(self.faults.trickle_head_delay)
                return True
            if matches(self.faults.trickle) or matches(self.faults.endless):
                req.send_response(200)
                req.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                req.end_headers()
                slow = matches(self.faults.trickle)
                while not self._stopped.is_set():
                    req.wfile.write(b" " if slow else b" " * 65536)
                    req.wfile.flush()
                    if slow:
                        self._stopped.wait(0.3)
                return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            return True
        return False

    def _page(self, req, path: str, head: bool) -> None:
        project = path[len(self.mount) + 1 :].strip("/")
        variant = ""
        if self.variants:
            variant, _, project = project.partition("/")
        if not project:
            names = sorted(
                {
                    canonicalize_name(_project_of(p.name))
                    for p in self.files_dir.iterdir()
                    if _project_of(p.name)
                }
            )
            body = "".join(f'<a href="{n}/">{n}</a>\n' for n in names).encode()
            return self._send(req, 200, body, "text/html", head=head)
        prefix = f"{self.mount}/{variant}" if variant else self.mount
        if canonicalize_name(project) != project:
            return self._redirect(req, f"{prefix}/{canonicalize_name(project)}/")
        files = self._project_files(project, variant)
        if not files:
            return self._send(req, 404, b"no such project", "text/plain", head=head)
        accept = req.headers.get("Accept", "")
        entries = []
        for item in files:
            data = item.read_bytes()
            entry = {
                "filename": item.name,
                "url": f"/files/{variant + '/' if variant else ''}{item.name}",
                "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                "size": len(data),
                "yanked": self.yank_reasons.get(item.name) or item.name in self.yanked,
            }
            if item.name in self.upload_times:
                entry["upload-time"] = self.upload_times[item.name]
            if (
                self.faults.serve_metadata
                and self.faults.advertise_metadata
                and item.name.endswith(".whl")
            ):
                meta = self.faults.metadata_body.get(item.name) or self._metadata_of(item) or b""
                entry["core-metadata"] = {"sha256": hashlib.sha256(meta).hexdigest()}
            entries.append(entry)
        etag = (
            '"'
            + hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:16]
            + '"'
        )
        if self.faults.etag and req.headers.get("If-None-Match") == etag:
            return self._send(req, 304, b"", "text/plain", head=True, extra={"ETag": etag})
        extra = {"ETag": etag} if self.faults.etag else {}
        if self.faults.serve_json and "application/vnd.pypi.simple.v1+json" in accept:
            body = json.dumps(
                {"meta": {"api-version": "1.1"}, "name": project, "files": entries}
            ).encode()
            return self._send(
                req, 200, body, "application/vnd.pypi.simple.v1+json", head=head, extra=extra
            )
        links = []
        for e in entries:
            attrs = f'href="{e["url"]}#sha256={e["hashes"]["sha256"]}"'
            if e["yanked"]:
                reason = e["yanked"] if isinstance(e["yanked"], str) else ""
                attrs += f' data-yanked="{reason}"'
            if "core-metadata" in e:
                attrs += f' data-core-metadata="sha256={e["core-metadata"]["sha256"]}"'
            links.append(f"<a {attrs}>{e['filename']}</a><br/>")
        body = ("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>").encode()
        self._send(req, 200, body, "text/html", head=head, extra=extra)

    def _file(self, req, name: str, head: bool) -> None:
        name = urllib.parse.unquote(name)  # pip asks for torch-2.1.2%2Bcu118-...whl, as PyPI serves
        if name.endswith(".metadata"):
            wheel = self.files_dir / name[: -len(".metadata")]
            meta = (
                self._metadata_of(wheel) if self.faults.serve_metadata and wheel.exists() else None
            )
            meta = self.faults.metadata_body.get(wheel.name, meta) if meta is not None else None
            if meta is None:
                return self._send(req, 404, b"no metadata", "text/plain", head=head)
            return self._send(req, 200, meta, "application/octet-stream", head=head)
        item = self.files_dir / name
        if not item.is_file():
            return self._send(req, 404, b"no such file", "text/plain", head=head)
        data = item.read_bytes()
        wanted = req.headers.get("Range")
        if wanted and not self.faults.refuse_ranges:
            start, end = _parse_range(wanted, len(data))
            if start is None:
                return self._send(
                    req,
                    416,
                    b"",
                    "text/plain",
                    head=head,
                    extra={"Content-Range": f"bytes */{len(data)}"},
                )
            part = data[start : end + 1]
            return self._send(
                req,
                206,
                part,
                "application/octet-stream",
                head=head,
                extra={
                    "Content-Range": f"bytes {start}-{end}/{len(data)}",
                    "Accept-Ranges": "bytes",
                },
            )
        self._send(
            req, 200, data, "application/octet-stream", head=head, extra={"Accept-Ranges": "none"}
        )

    def _redirect(self, req, location: str) -> None:
        req.send_response(301)
        req.send_header("Location", location)
        req.send_header("Content-Length", "0")
        req.end_headers()

    def _send(
        self,
        req,
        status: int,
        body: bytes,
        content_type: str,
        *,
        head: bool = False,
        extra: dict | None = None,
    ) -> None:
        path = req.path.split("?", 1)[0]
        if status == 404 and self.faults.catch_all:  # a mirror that answers every path
            status, content_type = 200, "text/html"
            body = b"<!DOCTYPE html><html><body><h1>Welcome to our mirror</h1></body></html>"
        truncated = path in self.faults.truncate_once
        if truncated:
            self.faults.truncate_once.discard(path)
        req.send_response(status)
        req.send_header("Content-Type", content_type)
        req.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            req.send_header(key, value)
        req.end_headers()
        if head or status == 304:
            return
        payload = body[: len(body) // 2] if truncated else body
        with self._lock:
            self.bytes_sent += len(payload)
        try:
            req.wfile.write(payload)
            if truncated:
                req.wfile.flush()
                req.close_connection = True
                req.connection.shutdown(2)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass


def _parse_range(header: str, size: int) -> tuple[int | None, int]:
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match:
        return None, 0
    first, last = match.groups()
    if first == "":
        length = int(last)
        if length == 0:
            return None, 0
        return max(0, size - length), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if start >= size:
        return None, 0
    return start, min(end, size - 1)


def _project_of(filename: str) -> str | None:
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        if filename.endswith((".tar.gz", ".zip")):
            return str(parse_sdist_filename(filename)[0])
    except Exception:
        return None
    return None
