"""Issue 30 items 5 and 6, through a real `lockguard resolve` process against a real index on
127.0.0.1 (tests/support/index_server.py).

5. A server that trickles its status line and headers (a byte every 0.5 s, never complete) is given
   up after the timeout, twice, with exit 4 naming the URL: for the index page, for a range read of
   a wheel, for an sdist's download and for an advertised `.metadata` (every request lockguard's
   resolve makes goes through io/index/http.py). httpx's timeouts are per socket read, so before
   the fix each of these ran for as long as the server went on trickling.
6. `<file>.metadata` is asked for only where the page advertises it; an advertised one that fails
   its sha256 is set aside for the wheel's own METADATA.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lockguard.lockfiles import requirements_lock

FAST = {"LOCKGUARD_HTTP_TIMEOUT": "1"}
BOUND = 60  # seconds: two 1 s tries and a process start on a loaded machine; the bug ran for ever


def resolve(lg_process, project: Path, env: dict[str, str] | None = None):
    started = time.monotonic()
    result = lg_process(
        "resolve", "--intent", str(project / "lockguard.toml"), env={**FAST, **(env or {})}
    )
    return result, time.monotonic() - started


def clean(result) -> None:
    for noise in ("Traceback", "internal error", "exception calling callback"):
        assert noise not in result.output, result.output


def pinned(project: Path) -> dict[str, str]:
    lock = requirements_lock.parse((project / "requirements.lock").read_text())
    return {name: entry.version for name, entry in lock.entries.items()}


# -- item 5: the rule holds from the connect to the last byte, headers included -------------------


@pytest.mark.parametrize(
    ("trickled", "pip", "what"),
    [
        ("/simple/jinja2/", ["jinja2"], "the index page"),
        ("/files/jinja2-1.0-py3-none-any.whl", ["jinja2==1.0"], "a range read of the wheel"),
        ("/files/static_sdist-1.0.tar.gz", ["static-sdist"], "the sdist's download"),
    ],
)
def test_trickled_headers_end_the_resolve_with_exit_4_naming_the_url(
    tmp_path, world, lg_process, trickled, pip, what
):
    world.pypi.faults.trickle_head.add(trickled)
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=pip)
    result, took = resolve(lg_process, project)
    assert result.exit_code == 4, (what, result.output)
    assert took < BOUND, (what, took)
    host = world.pypi.url.split("/")[2]
    assert f"cannot reach http://{host}{trickled}" in result.stderr, (what, result.stderr)
    assert "no answer within 1 s (2 attempts)" in result.stderr, (what, result.stderr)
    assert "LOCKGUARD_HTTP_TIMEOUT" in result.stderr  # the hint says how to wait longer
    tries = [p for _m, p, _r in world.pypi.requests if p.startswith(trickled)]
    assert len(tries) == 2, (what, tries)  # a timeout is retried once, as before
    assert not (project / "requirements.lock").exists()
    clean(result)


def test_a_trickled_advertised_metadata_is_exit_4_too(tmp_path, world, lg_process):
    world.pypi.faults.serve_metadata = True  # advertised: asked for, and it trickles
    world.pypi.faults.trickle_head.add("/files/jinja2-1.0-py3-none-any.whl.metadata")
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2==1.0"])
    result, took = resolve(lg_process, project)
    assert result.exit_code == 4, result.output
    assert took < BOUND
    assert "jinja2-1.0-py3-none-any.whl.metadata: no answer within 1 s" in result.stderr
    clean(result)


# -- item 6: PEP 658 only where advertised; a bad one never decides anything ----------------------


def test_a_catch_all_mirror_never_decides_the_exit_code(tmp_path, world, lg_process):
    # 200 with an HTML page for any path it has nothing for, `.metadata` included; the page does
    # not advertise metadata. Before the fix the unadvertised probe raced the range read, and the
    # resolve exited 0 or 4 at random (corpus index.pep658mismatch.resolve)
    world.pypi.faults.catch_all = True
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    for run in range(3):
        world.pypi.reset_counters()
        # a cache of its own each time: every run reads the metadata from the index again
        result, _took = resolve(
            lg_process, project, env={"LOCKGUARD_CACHE_DIR": str(tmp_path / f"cache{run}")}
        )
        assert result.exit_code == 0, (run, result.output)
        assert "markupsafe" in pinned(project), run
        paths = [p for _m, p, _r in world.pypi.requests]
        assert not [p for p in paths if p.endswith(".metadata")], (run, paths)
        assert any(p.endswith(".whl") for p in paths)  # read from the wheel, by ranges
        clean(result)


def test_an_advertised_metadata_that_fails_its_sha256_is_set_aside(tmp_path, world, lg_process):
    # valid METADATA, but not the one the page vouches for, and without jinja2's dependency:
    # trusted, the lock would silently miss markupsafe
    world.pypi.faults.serve_metadata = True
    world.pypi.faults.replace["/files/jinja2-1.0-py3-none-any.whl.metadata"] = (
        "application/octet-stream",
        b"Metadata-Version: 2.1\nName: jinja2\nVersion: 1.0\n",
    )
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2==1.0"])
    result, _took = resolve(lg_process, project)
    assert result.exit_code == 0, result.output
    assert (
        "jinja2-1.0-py3-none-any.whl.metadata, which the index advertises, is unusable (it does "
        "not match its advertised sha256); reading the wheel's own METADATA instead"
        in result.stderr
    )
    assert "markupsafe" in pinned(project)
    paths = [p for _m, p, _r in world.pypi.requests]
    assert "/files/jinja2-1.0-py3-none-any.whl.metadata" in paths  # advertised: asked for
    clean(result)


def test_a_conda_channel_that_trickles_its_headers_ends_in_exit_4(tmp_path, world, lg_process):
    # the conda side goes through rattler: one total limit per request (io/index/conda.py), 24
    # timeouts (6 s here), tried twice; before the fix rattler waited for as long as it trickled
    world.pypi.faults.trickle_head.add("/chan/")
    channel = world.pypi.url.replace("/simple", "/chan")
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=[], channels=[channel], extra='conda = ["zlib"]\n')
    result, took = resolve(lg_process, project, env={"LOCKGUARD_HTTP_TIMEOUT": "0.25"})
    assert result.exit_code == 4, result.output
    assert took < BOUND, took
    assert f"cannot read conda channel(s) {channel}" in result.stderr, result.stderr
    assert "timed out" in result.stderr, result.stderr
    clean(result)


def test_a_connect_that_hangs_past_the_timeout_marks_the_host_down(monkeypatch):
    # the head's deadline and the connect timeout are both 1 s here: whichever fires first, a
    # host that never completed a connection is out of reach, and not asked again in the run
    # (an unreachable index costs one failure, not one per page)
    import socket

    from lockguard.errors import SourceUnreachable
    from lockguard.io.index.http import HttpClient

    monkeypatch.setenv("LOCKGUARD_HTTP_TIMEOUT", "1")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)  # never accepted: once its queue is full, the kernel drops further SYNs
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))  # in progress: EINPROGRESS, not an error here
        fillers.append(filler)
    time.sleep(0.2)
    client = HttpClient()
    try:
        took = []
        for page in ("a", "b"):
            started = time.monotonic()
            with pytest.raises(SourceUnreachable, match="no answer within 1 s"):
                client.get(f"http://127.0.0.1:{port}/simple/{page}/")
            took.append(time.monotonic() - started)
        assert took[0] >= 1.5  # two tries of 1 s
        assert took[1] < 0.5, took  # the host is known to be down: not tried again
    finally:
        client.close()
        for filler in fillers:
            filler.close()
        server.close()
