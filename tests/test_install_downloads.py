"""clean-install downloads the lock's files itself (app/install_files.py,
io/env/engines/downloads.py, issue 32): under the resolve's stall rule (a trickling wheel stops
the run with exit 4 naming the file, within the deadline, the prefix rolled back), verified by
sha256, kept in lockguard's cache, and handed to the engine as local files with --no-index;
progress is a line every 10 s in a log."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lockguard.app.install_files import DownloadLine
from lockguard.install.locked_files import LockedFile, choose_files, link_files
from lockguard.lockfiles.requirements_lock import LockedRequirement, RequirementsLock
from lockguard.model.dist import DistFile
from tests.support.envs import PIP_ENV, site_packages, tree_hashes
from tests.support.wheels import build_wheel

WHEEL = "scripty-1.0-py3-none-any.whl"


@pytest.fixture
def project(world, tmp_path) -> Path:
    world.pypi.add(
        build_wheel(world.wheels, "scripty", "1.0", files={"scripty/__init__.py": b"S = 1\n"})
    )
    return world.locked(tmp_path / "project", cuda="12.1", pip=["oldlib", "scripty"])


def lockguard(project: Path, venv: Path, *args: str, env: dict | None = None):
    command, rest = args[0], args[1:]
    intent = [] if command == "restore" else ["--intent", str(project / "lockguard.toml")]
    return subprocess.run(
        [sys.executable, "-m", "lockguard", command, *intent, "--prefix", str(venv), *rest],
        env={**os.environ, **PIP_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def install_txt(venv: Path) -> str:
    """The requirements files the engine got (uv: one per batch of downloads), in order."""
    (run,) = (venv / ".lockguard" / "quarantine").iterdir()
    found = sorted(run.glob("install*.txt"), key=lambda p: (len(p.name), p.name))
    assert found
    return "".join(f.read_text() for f in found)


def test_a_trickling_wheel_stops_the_run_with_exit_4_naming_it_and_rolls_back(world, project, venv):
    before = tree_hashes(venv)
    world.pypi.faults.trickle.add(f"/files/{WHEEL}")  # headers, then a byte every 0.3 s
    started = time.monotonic()
    # each answer within 0.5 s, past 3 s at 256 kB/s; tried twice: about 6 s, not for ever
    done = lockguard(project, venv, "clean-install", "--yes", env={"LOCKGUARD_HTTP_TIMEOUT": "0.5"})
    took = time.monotonic() - started
    assert done.returncode == 4, done.stderr
    assert f"downloading {WHEEL} (scripty 1.0) failed" in done.stderr
    assert "slower than 256 kB/s" in done.stderr and "(2 attempts)" in done.stderr
    assert took < 60, took
    assert tree_hashes(venv) == before  # rolled back (nothing was left changed)


def test_other_bytes_than_the_locked_ones_fail_the_run_before_the_engine(world, project, venv):
    before = tree_hashes(venv)
    world.pypi.faults.replace[f"/files/{WHEEL}"] = ("application/octet-stream", b"not a wheel")
    done = lockguard(project, venv, "clean-install", "--yes")
    assert done.returncode == 5, done.stderr
    assert "is not the file the lock names" in done.stderr and WHEEL in done.stderr
    assert tree_hashes(venv) == before


def test_the_engine_gets_local_files_and_no_index(world, project, venv, tmp_path):
    """The second run has a cold uv cache, no cached index page and an index whose pages and files
    all fail: the locked files come from lockguard's cache by their sha256, and uv asks no index
    for them."""
    first = lockguard(project, venv, "clean-install", "--yes")
    assert first.returncode == 0, first.stderr
    assert "locked files ready" in first.stderr
    text = install_txt(venv)
    assert "--no-index" in text and "--index-url" not in text and "--find-links" in text
    assert lockguard(project, venv, "restore").returncode == 0
    world.pypi.faults.status["/files/"] = 500
    world.pypi.faults.status["/simple/"] = 500  # and no page: the files are known by their sha256
    shutil.rmtree(Path(os.environ["LOCKGUARD_CACHE_DIR"]) / "entries")  # pages cached: gone
    again = lockguard(
        project, venv, "clean-install", "--yes", env={"UV_CACHE_DIR": str(tmp_path / "cold-uv")}
    )
    assert again.returncode == 0, again.stderr
    assert (site_packages(venv) / "scripty" / "__init__.py").read_bytes() == b"S = 1\n"


def test_uv_unpacks_a_cached_file_once_across_runs(project, venv, tmp_path):
    """uv keys the wheels it unpacked by where it found them: each file in lockguard's cache is
    offered from its own folder there, the same every run, so a second clean-install unpacks
    nothing again (a links page in the run's own folder had uv unzip every wheel on every run,
    and its cache grow by a copy of the lock per run)."""
    uv_cache = tmp_path / "uv-cache"
    env = {"UV_CACHE_DIR": str(uv_cache)}
    first = lockguard(project, venv, "clean-install", "--yes", env=env)
    assert first.returncode == 0, first.stderr
    text = install_txt(venv)
    unpacked = sorted(uv_cache.glob("archive-v*/*"))
    assert unpacked
    assert lockguard(project, venv, "restore").returncode == 0
    again = lockguard(project, venv, "clean-install", "--yes", env=env)
    assert again.returncode == 0, again.stderr
    assert sorted(uv_cache.glob("archive-v*/*")) == unpacked
    assert "links.html" not in text and text.count("--find-links ") == 2  # scripty, oldlib


def test_a_warm_reinstall_opens_no_http_client(world, project, venv, tmp_path):
    """Every locked file is in lockguard's cache: the run neither asks an index nor imports httpx
    (its import and its teardown at exit are about 80 ms of a warm clean-install), nor pyelftools
    (no ELF file is read)."""
    assert lockguard(project, venv, "clean-install", "--yes").returncode == 0
    assert lockguard(project, venv, "restore").returncode == 0
    world.pypi.faults.status["/"] = 500  # nothing of the index is needed
    out = tmp_path / "modules.txt"
    script = (
        "import sys, atexit\n"
        "out = sys.argv[1]\n"
        "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
        "sys.argv = ['lockguard'] + sys.argv[2:]\n"
        "from lockguard.start import main\nmain()\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(out),
            "clean-install",
            "--yes",
            "--prefix",
            str(venv),
            "--intent",
            str(project / "lockguard.toml"),
        ],  # fmt: skip
        env={**os.environ, **PIP_ENV},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "downloaded 0, 2 from lockguard's cache" in done.stderr
    modules = out.read_text().split()
    assert not [m for m in modules if m.split(".")[0] in ("httpx", "httpcore", "h11", "elftools")]
    assert (site_packages(venv) / "scripty" / "__init__.py").read_bytes() == b"S = 1\n"


def test_the_lock_source_reads_the_knowledge_as_the_plain_check_does(project, monkeypatch):
    """Without the PEP 508 parse of the knowledge's deep fields (about 40 ms of every
    clean-install; the shipped files are validated by the test suite, resolve validates others)."""
    from lockguard.app import install_source

    seen: list[dict] = []
    real = install_source.load_knowledge

    def load(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(install_source, "load_knowledge", load)
    source = install_source.lock_source(project / "lockguard.toml", None)
    assert seen == [{"validate": False}]
    assert {"oldlib", "scripty"} <= set(source.view.pip)


class _Progress:
    def __init__(self, live: bool) -> None:
        self.live = live
        self.lines: list[str] = []

    def step(self, message: str) -> None:
        self.lines.append(message)


def test_the_download_line_comes_every_10_s_in_a_log_and_live_on_a_terminal():
    now = [0.0]
    log = _Progress(live=False)
    line = DownloadLine(log, 2, clock=lambda: now[0])  # type: ignore[arg-type]
    big = LockedFile("torch", "2.1.0", "torch-2.1.0-cp311-cp311-linux_x86_64.whl", "u", "a" * 64)
    for second in range(0, 25):
        now[0] = float(second)
        line(big, second * 10**6, 100 * 10**6, second * 10**6, 200 * 10**6)
    assert len(log.lines) == 3  # at 0, 10 and 20 s
    assert log.lines[1] == (
        "downloading torch-2.1.0-cp311-cp311-linux_x86_64.whl: 10.0 MB/100 MB "
        "(file 1/2; 10.0 MB/200 MB in all)"
    )
    live = _Progress(live=True)
    line = DownloadLine(live, 2, clock=lambda: now[0])  # type: ignore[arg-type]
    for tenth in range(10):
        now[0] = tenth / 10
        line(big, tenth, 100, tenth, 200)
    assert len(live.lines) >= 5  # about every 0.1 s


def test_the_best_fitting_locked_wheel_is_chosen_and_a_package_without_one_is_left_to_the_index():
    lock = RequirementsLock(
        {
            "numpy": LockedRequirement("numpy", "1.26.4", ("h1", "h2", "h3"), (), 1),
            "gone": LockedRequirement("gone", "1.0", ("h9",), (), 2),
        }
    )
    files = {
        "numpy": [
            DistFile("numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl", "u1", {"sha256": "h1"}),
            DistFile("numpy-1.26.4-cp311-cp311-musllinux_1_1_x86_64.whl", "u2", {"sha256": "h2"}),
            DistFile("numpy-1.26.4.tar.gz", "u3", {"sha256": "h3"}),
            DistFile("numpy-1.26.4-cp311-cp311-manylinux_2_28_x86_64.whl", "u4", {"sha256": "hX"}),
        ]
    }
    ranks = {"numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl": 3}
    choice = choose_files(
        ["numpy==1.26.4", "gone==1.0"], lock, lambda n: files.get(n, []), ranks.get
    )
    assert [f.url for f in choice.files] == ["u1"]  # the locked wheel that fits, not the sdist
    assert choice.missing == ["gone==1.0"]
    sdist_only = choose_files(["numpy==1.26.4"], lock, lambda n: files[n], lambda _f: None)
    assert [f.url for f in sdist_only.files] == ["u3"]


def test_a_pylocks_links_are_files_by_project():
    links = link_files(["https://x/files/Foo_Bar-1.0-py3-none-any.whl#sha256=ab", "file:///w/x"])
    assert [(f.filename, f.sha256) for f in links["foo-bar"]] == [
        ("Foo_Bar-1.0-py3-none-any.whl", "ab")
    ]


def test_uv_installs_the_files_that_landed_while_a_slow_one_still_downloads(world, project, venv):
    """A cold install overlaps the download and the engine: uv gets one requirements file per
    batch of downloads as they land, so the small wheels are installed while a slow one is still
    arriving (one uv run after every download took their sum: 20 s of download, then 22 s of
    unpacking, for the seed's torch lock)."""
    world.pypi.faults.delay[f"/files/{WHEEL}"] = 2.0  # answered 2 s late, within the stall rule
    done = lockguard(project, venv, "clean-install", "--yes")
    assert done.returncode == 0, done.stderr
    (run,) = (venv / ".lockguard" / "quarantine").iterdir()
    first = (run / "install.1.txt").read_text()
    assert "oldlib==" in first and "scripty==" not in first
    assert "scripty==" in install_txt(venv)
    (landed,) = Path(os.environ["LOCKGUARD_CACHE_DIR"]).glob(f"*/files/*/{WHEEL}")
    oldlib = next(site_packages(venv).glob("oldlib-*.dist-info")) / "METADATA"
    assert oldlib.stat().st_mtime < landed.stat().st_mtime - 1.0  # installed before it landed
    assert (site_packages(venv) / "scripty" / "__init__.py").read_bytes() == b"S = 1\n"
