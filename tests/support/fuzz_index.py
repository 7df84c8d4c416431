"""The index family of the bad-input corpus: a local index whose jinja2 page, wheel metadata or
connection misbehaves in many ways, deterministically generated. A resolve must end as the
contract says (4 for a broken source, 3 for no answer, 0 only with a complete lock), never crash,
hang or produce a lock that silently lacks a dependency (jinja2 without markupsafe)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass

JSON = "application/vnd.pypi.simple.v1+json"
TYPES = {"null": None, "int": 1, "string": "x", "list": [], "object": {}, "bool": True}


@dataclass
class IndexCase:
    name: str
    arm: Callable  # (LocalIndex, valid page dict) -> None: set the fault
    expect: frozenset = frozenset({4})


def _set(document, path: tuple, value):
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


PAGE_PATHS = [
    ("files",),
    ("files", 0),
    ("files", 0, "filename"),
    ("files", 0, "url"),
    ("files", 0, "hashes"),
    ("files", 0, "hashes", "sha256"),
    ("files", 0, "requires-python"),
    ("files", 0, "yanked"),
    ("files", 0, "core-metadata"),
    ("files", 0, "upload-time"),
    ("files", 0, "size"),
    ("meta",),
    ("meta", "api-version"),
    ("name",),
]


def page_cases() -> list[IndexCase]:
    cases = []
    for path in PAGE_PATHS:
        for label, value in TYPES.items():

            def arm(index, page, path=path, value=value):
                broken = copy.deepcopy(page)
                _set(broken, path, value)
                index.faults.replace["/simple/jinja2/"] = (JSON, json.dumps(broken).encode())

            # an optional field of the wrong type may be ignored (exit 0 with a complete lock) or
            # refused (4)
            cases.append(
                IndexCase(f"page-{'.'.join(map(str, path))}={label}", arm, frozenset({0, 3, 4}))
            )
    raw = {
        "empty": (JSON, b""),
        "not-json": (JSON, b"{oops"),
        "truncated": (JSON, None),
        "number": (JSON, b"42"),
        "nul-bytes": (JSON, b"\x00" * 64),
        "deep": (JSON, b"[" * 100_000 + b"]" * 100_000),
        "utf16": (JSON, '{"files": []}'.encode("utf-16")),
        "html-garbage": ("text/html", b"<html><a href=>"),
        "html-binary": ("text/html", b"\xff\xfe\x00\x01" * 64),
        "html-empty": ("text/html", b""),
        "html-huge-link": ("text/html", b'<a href="' + b"x" * 2_000_000 + b'">x</a>'),
        "wrong-type": ("image/png", b"\x89PNG"),
        "many-files": (JSON, None),
        "bad-link-hash": ("text/html", None),
    }
    for label, (content_type, body) in raw.items():

        def arm(index, page, label=label, content_type=content_type, body=body):
            if label == "truncated":
                body = json.dumps(page).encode()[:40]
            elif label == "many-files":  # a page as long as torch's, ten times over
                body = json.dumps(
                    {
                        "meta": {"api-version": "1.1"},
                        "name": "jinja2",
                        "files": [page["files"][0]] * 20_000,
                    }
                ).encode()
            elif label == "bad-link-hash":
                body = (
                    f'<a href="{page["files"][0]["url"]}#sha256=nothex">'
                    "jinja2-1.0-py3-none-any.whl</a>"
                ).encode()
            index.faults.replace["/simple/jinja2/"] = (content_type, body)

        cases.append(IndexCase(f"raw-{label}", arm, frozenset({0, 3, 4})))
    return cases


METADATA = {
    "empty": b"",
    "no-version": b"Metadata-Version: 2.1\nName: jinja2\n",
    "other-name": b"Metadata-Version: 2.1\nName: other\nVersion: 1.0\n",
    "other-version": b"Metadata-Version: 2.1\nName: jinja2\nVersion: 7.7\n",
    "bad-requires": (
        b"Metadata-Version: 2.1\nName: jinja2\nVersion: 1.0\nRequires-Dist: markupsafe (>=>2\n"
    ),
    "bad-python": b"Metadata-Version: 2.1\nName: jinja2\nVersion: 1.0\nRequires-Python: 3..\n",
    "binary": b"\x00\xff" * 100,
    "huge": b"Metadata-Version: 2.1\nName: jinja2\nVersion: 1.0\n" + b"X: y\n" * 3_000_000,
    "latin1": (
        "Metadata-Version: 2.1\nName: jinja2\nVersion: 1.0\nSummary: caf\xe9\n"
        "Requires-Dist: markupsafe\n"
    ).encode("latin-1"),
    "headers-only-garbage": b"::::\n::::\n",
}


def metadata_cases() -> list[IndexCase]:
    cases = []
    for label, body in METADATA.items():

        def arm(index, page, body=body):
            index.faults.serve_metadata = True
            index.faults.metadata_body["jinja2-1.0-py3-none-any.whl"] = body

        # a .metadata that does not hold up is set aside for the wheel's own METADATA, which is
        # good here: a complete lock (issue 30 item 6: a bad .metadata never decides the exit code)
        cases.append(IndexCase(f"pep658-{label}", arm, frozenset({0})))
    return cases


def connection_cases() -> list[IndexCase]:
    cases = []
    # (trickling and endless bodies take the full deadline or size limit each:
    # tests/test_resolve_hostile.py has them once; here the modes that end quickly)
    for mode in ("hang", "redirect_loop"):
        for where in ("/simple/jinja2/", "/files/"):

            def arm(index, page, mode=mode, where=where):
                getattr(index.faults, mode).add(where)

            cases.append(
                IndexCase(f"conn-{mode}-{where.strip('/').replace('/', '-')}", arm, frozenset({4}))
            )
    for status in (400, 401, 403, 404, 410, 418, 429, 500, 502, 503):
        for where in ("/simple/jinja2/", "/files/"):

            def arm(index, page, status=status, where=where):
                index.faults.status[where] = status

            # no such page is "no such project": bad input for a requirement of the intent (2,
            # naming its line), a conflict for a dependency (3); any other refusal is an
            # unreachable source (4)
            expect = (
                {2, 3}
                if status == 404 and where.startswith("/simple")
                else {3, 4}
                if status == 410 and where.startswith("/simple")
                else {4}
            )
            cases.append(
                IndexCase(
                    f"status-{status}-{where.strip('/').split('/')[0]}", arm, frozenset(expect)
                )
            )
    return cases


def index_corpus() -> list[IndexCase]:
    return page_cases() + metadata_cases() + connection_cases()
