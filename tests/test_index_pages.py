"""PEP 691 pages read through msgspec (io/msgspec_adapter.py) give exactly the rows of the
standard-library reader, keep its strictness, and fall back to it for every message."""

from __future__ import annotations

import json

import pytest

from lockguard.io import msgspec_adapter as page_json
from lockguard.io.index import simple_index
from lockguard.io.index.simple_index import BadPage, json_rows

PAGE = "https://pypi.example/simple/demo/"
SHA = "a" * 64


def entry(filename: str, **fields) -> dict:
    return {
        "filename": filename,
        "url": f"https://files.example/{filename}",
        "hashes": {"sha256": SHA},
        **fields,
    }


ENTRIES = [
    entry("demo-1.0-py3-none-any.whl"),
    entry(
        "demo-1.0.tar.gz",
        **{"requires-python": ">=3.8", "size": 10, "upload-time": "2024-01-01T00:00:00Z"},
    ),
    entry(
        "demo-1.1-cp311-cp311-manylinux_2_17_x86_64.whl", **{"core-metadata": {"sha256": "B" * 64}}
    ),
    entry("demo-1.2-cp311-cp311-win_amd64.whl", **{"data-dist-info-metadata": True}),
    # an explicit null core-metadata hides the older key (as dict.get with a default does)
    entry("demo-1.3-py3-none-any.whl", **{"core-metadata": None, "data-dist-info-metadata": True}),
    entry("demo-1.4-py3-none-any.whl", **{"core-metadata": False, "yanked": "broken build"}),
    entry("demo-1.5-py3-none-any.whl", yanked=True, hashes=None, size=None),
    {
        "filename": "demo-1.6-py3-none-any.whl",
        "url": "../../files/demo-1.6-py3-none-any.whl",
        "extra": [1, {}],
    },
    entry("demo-1.7-py3-none-any.whl", hashes={"md5": "x", "sha256": SHA.upper()}),
]


def both(body: bytes, keep=None):
    fast = json_rows(body, PAGE, keep)
    saved, page_json.DECODER = page_json.DECODER, None
    try:
        slow = json_rows(body, PAGE, keep)
    finally:
        page_json.DECODER = saved
    return fast, slow


def test_fast_and_standard_readers_give_the_same_rows():
    assert page_json.DECODER is not None, "msgspec is a dependency: the fast reader must be in use"
    body = json.dumps({"meta": {"api-version": "1.1"}, "name": "demo", "files": ENTRIES}).encode()
    # msgspec takes this page: the fast rows are compared
    assert page_json.page_files(body) is not None
    fast, slow = both(body)
    assert fast == slow
    assert len(fast) == len(ENTRIES)
    # core-metadata: null -> no metadata, data-dist-info-metadata is not read
    assert fast[4][5] is False
    assert fast[3][5] is True
    assert fast[7][1] == "https://pypi.example/files/demo-1.6-py3-none-any.whl"
    keep = lambda name: "win_amd64" not in name  # noqa: E731
    fast, slow = both(body, keep)
    assert fast == slow and len(fast) == len(ENTRIES) - 1


def test_typed_rows_are_used_for_a_valid_page(monkeypatch):
    """The fast path really runs (it is not silently falling back to the standard reader)."""
    monkeypatch.setattr(
        simple_index, "_file_problem", lambda item: pytest.fail("the standard reader ran")
    )
    body = json.dumps({"files": ENTRIES[:3]}).encode()
    assert len(json_rows(body, PAGE)) == 3


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ([{"filename": "", "url": "x"}], "'filename' must be a non-empty string"),
        ([entry("demo-1.0.tar.gz", hashes={"sha256": "abc"})], "is not 64 hex digits"),
        (
            [entry("demo-1.0.tar.gz", **{"core-metadata": {"sha256": "xyz"}})],
            "is not 64 hex digits",
        ),
        ([entry("demo-1.0.tar.gz", hashes={"sha256": 5})], "must map algorithm names"),
        ([entry("demo-1.0.tar.gz", size="big")], "'size' of demo-1.0.tar.gz has the wrong type"),
        ([entry("demo-1.0.tar.gz"), 7], "file #2: an entry must be an object"),
    ],
)
def test_a_bad_entry_is_named_even_when_the_target_would_drop_it(files, fragment):
    """Strictness stays: a broken entry rejects the page whether or not `keep` would drop it."""
    body = json.dumps({"files": files}).encode()
    for keep in (None, lambda name: False):
        with pytest.raises(BadPage, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            json_rows(body, PAGE, keep)


def test_what_msgspec_refuses_goes_to_the_standard_reader():
    # NaN and a lone surrogate: json.loads reads both, msgspec refuses them; the answer is the same
    body = (
        b'{"files": [{"filename": "demo-1.0.tar.gz", "url": "https://f/\\ud800", '
        b'"size": null, "x": NaN}]}'
    )
    assert page_json.page_files(body) is None
    fast, slow = both(body)
    assert fast == slow and fast[0][1] == "https://f/\ud800"
    # a bool is an int to isinstance
    body = json.dumps({"files": [entry("demo-1.0.tar.gz", size=True)]}).encode()
    assert page_json.page_files(body) is None
    fast, slow = both(body)
    assert fast == slow and fast[0][7] is True


# -- the intent's pages, requested while the resolver is imported (io/index/early.py) --------------


def test_early_requests_are_taken_by_the_resolve_never_made_twice(tmp_path, world, lg):
    from lockguard.io.index import early
    from lockguard.lockfiles import requirements_lock

    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*", "jinja2"])
    assert early._urls(project / "lockguard.toml", refresh=False, offline=False) == [
        f"{world.pypi.url}/torch/",
        f"{world.pypi.url}/jinja2/",
    ]
    world.pypi.requests.clear()
    result = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"))
    assert result.exit_code == 0, result.stderr
    pages = [path for method, path, _range in world.pypi.requests if path.endswith("/")]
    # asked early, once
    assert pages.count("/simple/torch/") == 1 and pages.count("/simple/jinja2/") == 1
    assert early.fetched()[1] == 2  # the two pages came through the early requests...
    assert early._ANSWERS == {}  # ...and every early answer was handed to the index client
    assert "torch" in requirements_lock.parse((project / "requirements.lock").read_text()).entries
    # a second resolve finds the pages cached: nothing is requested early, the lock is the same
    before = (project / "requirements.lock").read_text()
    assert early._urls(project / "lockguard.toml", refresh=False, offline=False) == []
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    assert (project / "requirements.lock").read_text() == before


def test_early_requests_are_not_made_offline_or_for_a_pyproject_intent(tmp_path, world, lg):
    from lockguard.io.index import early

    project = tmp_path / "p"
    world.intent(project, pip=["jinja2"])
    intent = project / "lockguard.toml"
    assert early._urls(intent, refresh=False, offline=True) == []
    assert early._urls(tmp_path / "pyproject.toml", refresh=False, offline=False) == []
    assert early._urls(intent, refresh=True, offline=False) == [f"{world.pypi.url}/jinja2/"]
    # no intent: nothing
    early.start(tmp_path / "missing" / "lockguard.toml", refresh=False, offline=False)
    assert early._ANSWERS == {}
    world.pypi.requests.clear()
    assert lg("check", "--intent", str(intent)).exit_code in (0, 1)  # only resolve asks early
    assert early._ANSWERS == {} and world.pypi.requests == []


def test_a_cold_and_a_warm_resolve_import_nothing_in_their_threads(tmp_path, world):
    import os

    from tests.support.thread_imports import imports_by_threads

    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*", "jinja2"])
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(tmp_path / "fresh-cache")}
    for run in ("cold", "warm"):
        code, imported, stderr = imports_by_threads(
            ["resolve", "--intent", str(project / "lockguard.toml")], env
        )
        assert code == 0, stderr
        assert imported == [], f"{run} resolve: modules imported by threads: {imported}"
    assert world.pypi.requests, "the cold resolve asked the index (so its threads did run)"


def test_an_early_request_that_fails_unexpectedly_is_asked_again_never_waited_for(
    tmp_path, world, monkeypatch
):
    """A bug in an early thread (anything but an unreachable index) must neither hang the resolve
    nor become its error: the index client then makes the request itself."""
    import threading

    from lockguard.errors import SourceUnreachable
    from lockguard.io.index import early
    from lockguard.io.index.http import HttpClient
    from lockguard.io.index.simple_index import JSON_ACCEPT

    project = tmp_path / "p"
    world.intent(project, pip=["torch", "jinja2"])
    torch_page, jinja_page = f"{world.pypi.url}/torch/", f"{world.pypi.url}/jinja2/"

    def broken_get(self, url, headers=None, **_kw):
        if url == torch_page:
            raise RuntimeError("a bug in the early thread")
        raise SourceUnreachable(f"cannot reach {url}: refused", url=url)

    monkeypatch.setattr(HttpClient, "get", broken_get)
    early.start(project / "lockguard.toml", refresh=False, offline=False)
    answers: dict[str, object] = {}

    def taker():
        answers["torch"] = early.take(torch_page, {"Accept": JSON_ACCEPT})
        try:
            early.take(jinja_page, {"Accept": JSON_ACCEPT})
        except SourceUnreachable as exc:
            answers["jinja2"] = exc

    thread = threading.Thread(target=taker, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "take() waited for an early request that had died"
    assert answers["torch"] is None  # the client asks again
    # the index's own error, as if the client had asked
    assert isinstance(answers["jinja2"], SourceUnreachable)


def test_an_early_error_is_the_resolve_error(tmp_path, world, lg):
    """The index fails the early request: the resolve reports it as it would its own request."""
    project = tmp_path / "p"
    world.intent(project, pip=["jinja2"])
    world.pypi.stop()
    result = lg("resolve", "--intent", str(project / "lockguard.toml"))
    assert result.exit_code == 4, result.stderr
    assert "cannot reach" in result.stderr and "/jinja2/" in result.stderr


@pytest.mark.parametrize(
    "page",
    [
        # cut inside the first link: it used to read as a project with no files (exit 3)
        '<!DOCTYPE html><html><body><a href="jinja2-3.1.3-py3-none-any.whl#sha256=',
        '<html><body><a href="jinja2-3.1.3-py3-none-any.whl">jinja2-3.1.3-py3-none-any.whl',
        '<html><body><a href="jinja2-3.1.3-py3-none-any.whl">jinja2-3.1.3-py3-none-any.whl</a>\n',
    ],
)
def test_a_page_cut_short_is_a_bad_page_never_an_empty_project(page):
    with pytest.raises(BadPage, match="ends before its end"):
        simple_index.project_rows(page.encode(), "text/html", "https://i.example/simple/jinja2/")


@pytest.mark.parametrize(
    "page",
    [
        "<html><body></body></html>",  # a project with no files
        '<a href="x-1.0-py3-none-any.whl">x-1.0-py3-none-any.whl</a><br/>\n',  # no html at all
        '<html><body><a href="x-1.0-py3-none-any.whl">x-1.0-py3-none-any.whl</a></body></html>',
    ],
)
def test_complete_pages_are_read_as_they_are(page):
    simple_index.project_rows(page.encode(), "text/html", "https://i.example/simple/x/")
