"""lockguard against its own cache turned hostile (issue 22, item 1), from the CLI: two indexes
serving the same relative links, every entry damaged in each way a disk or a person can damage
it, METADATA that is not what the index vouches for, and a cache folder that cannot be used. Every
command must still give the right answer, and none may hang (each runs as a child process with a
timeout)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.io.cache.root import ENTRIES
from tests.support import cache_entries
from tests.support.index_server import LocalIndex
from tests.support.wheels import build_wheel

TIMEOUT = 120  # a hang is a failure, never a stuck suite


def run(*args: str, cache: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "lockguard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def pip_intent(project: Path, index: str, pip: list[str], extra: str = "") -> Path:
    project.mkdir(parents=True, exist_ok=True)
    intent = project / "lockguard.toml"
    intent.write_text(
        f'python = "3.11"\ncuda = "none"\nchannels = []\nindexes = ["{index}"]\n'
        f"pip = {pip!r}\n".replace("'", '"')
        + extra
    )
    return intent


def test_two_indexes_serving_the_same_relative_links_never_share_a_parsed_page(tmp_path):
    """Two mirrors of one folder (pypiserver, devpi, a moved host): the second project's lock
    points at the second index, also once the first is gone."""
    wheels = tmp_path / "wheels"
    first, second = LocalIndex(tmp_path / "mirror").start(), LocalIndex(tmp_path / "mirror").start()
    first.add(build_wheel(wheels, "jinja2", "3.1.4", requires=["markupsafe>=2.0"]))
    first.add(build_wheel(wheels, "markupsafe", "2.1.5"))
    cache = tmp_path / "cache"
    try:
        outputs = '[outputs]\npylock = "pylock.toml"\n'
        a = pip_intent(tmp_path / "a", first.url, ["jinja2"], outputs)
        b = pip_intent(tmp_path / "b", second.url, ["jinja2"], outputs)
        assert run("resolve", "--intent", str(a), cache=cache).returncode == 0
        first.stop()
        done = run("resolve", "--intent", str(b), cache=cache)
        assert done.returncode == 0, done.stderr
        base = second.url.rsplit("/", 1)[0]
        urls = re.findall(r'url = "([^"]+)"', (tmp_path / "b" / "pylock.toml").read_text())
        assert urls and all(u.startswith(base + "/files/") for u in urls), urls
        assert run("check", "--intent", str(b), cache=cache).returncode == 0
    finally:
        second.stop()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A locked project and the cache its resolve and check filled, served by a world that keeps
    running for the module: (world, project, cache, {lock file: bytes}, check output)."""
    from tests.support.world import running_world

    root = tmp_path_factory.mktemp("hostile-cache")
    with running_world(root) as world:
        project = root / "project"
        world.intent(
            project,
            cuda="none",
            pip=["jinja2", "numpy"],
            channels=["conda-forge"],
            extra="conda-from-knowledge = true\n",
        )
        cache = root / "cache"
        intent = str(project / "lockguard.toml")
        assert run("resolve", "--intent", intent, cache=cache).returncode == 0
        checked = run("check", "--intent", intent, cache=cache)
        assert checked.returncode == 0 and "no findings" in checked.stdout
        locks = {p.name: p.read_bytes() for p in project.iterdir() if p.name != "lockguard.toml"}
        yield world, project, cache, locks, checked.stdout


def _damage_every_entry(cache: Path, how: str) -> int:
    entries = cache_entries.entries(root=cache)
    for path in entries:
        data = path.read_bytes()
        path.unlink()
        if how == "truncated":
            path.write_bytes(data[: len(data) // 2])
        elif how == "garbled":
            middle = len(data) // 2
            path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
        elif how == "fifo":
            os.mkfifo(path)
        elif how == "folder":
            path.mkdir()
    return len(entries)


def _swap(cache: Path) -> int:
    """Every entry replaced by the bytes of another (a rotation within each kind)."""
    entries = cache_entries.entries(root=cache)
    by_kind: dict[str, list[Path]] = {}
    for path in entries:
        by_kind.setdefault(path.relative_to(cache / ENTRIES).parts[0], []).append(path)
    for paths in by_kind.values():
        datas = [p.read_bytes() for p in paths]
        for path, data in zip(paths, datas[1:] + datas[:1], strict=True):
            path.write_bytes(data)
    return len(entries)


@pytest.mark.parametrize("how", ["truncated", "garbled", "fifo", "folder", "swapped"])
def test_every_command_is_right_over_a_cache_whose_every_entry_is_damaged(pristine, tmp_path, how):
    _world, template, pristine_cache, locks, check_output = pristine
    project, cache = tmp_path / "project", tmp_path / "cache"
    shutil.copytree(template, project)
    shutil.copytree(pristine_cache, cache, symlinks=True)
    damaged = _swap(cache) if how == "swapped" else _damage_every_entry(cache, how)
    # pages, bodies, rows, metadata, the resolution, parses, the check result...
    assert damaged >= 10
    intent = str(project / "lockguard.toml")
    for args in (
        ["check"],
        ["check", "--no-cache"],
        ["resolve"],
        ["resolve", "--refresh"],
        ["check"],
    ):
        done = run(*args, "--intent", intent, cache=cache)
        assert done.returncode == 0, f"{args}: {done.stderr}"
        assert "cuda.toml" not in done.stderr and "internal error" not in done.stderr
        if args[0] == "check":
            assert done.stdout == check_output
        else:
            assert {
                p.name: p.read_bytes() for p in project.iterdir() if p.name != "lockguard.toml"
            } == locks


def test_cached_metadata_is_checked_against_the_hash_the_index_gives(tmp_path):
    """A cached METADATA that is a valid entry but not the file the index vouches for (PEP 658
    hash) is fetched again, also with --refresh: never a lock that silently lacks a dependency."""
    index = LocalIndex(tmp_path / "index").start()
    index.faults.serve_metadata = True  # .metadata files, advertised with their sha256
    try:
        wheels = tmp_path / "wheels"
        index.add(build_wheel(wheels, "jinja2", "3.1.4", requires=["markupsafe>=2.0"]))
        index.add(build_wheel(wheels, "markupsafe", "2.1.5"))
        intent = pip_intent(tmp_path / "p", index.url, ["jinja2"])
        cache = tmp_path / "cache"
        assert run("resolve", "--intent", str(intent), cache=cache).returncode == 0
        [jinja] = [
            p
            for p in cache_entries.entries("metadata", cache)
            if b"Name: jinja2" in cache_entries.payload(p)
        ]
        # no Requires-Dist
        cache_entries.rewrite(jinja, b"Metadata-Version: 2.1\nName: jinja2\nVersion: 3.1.4\n")
        done = run("resolve", "--intent", str(intent), "--refresh", cache=cache)
        assert done.returncode == 0, done.stderr
        assert "markupsafe==2.1.5" in (tmp_path / "p" / "requirements.lock").read_text()
        assert b"markupsafe" in cache_entries.payload(jinja)  # the good METADATA was kept again
    finally:
        index.stop()


def _full_tmpfs(folder: Path) -> bool:
    folder.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
    ).returncode:
        return False
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return True


@pytest.mark.parametrize(
    "where", ["a file", "/dev/null", "a full file system", "a read-only file system"]
)
def test_an_unusable_cache_folder_is_a_warning_and_a_run_without_it(pristine, tmp_path, where):
    _world, template, _cache, locks, check_output = pristine
    project = tmp_path / "project"
    shutil.copytree(template, project)
    for name in locks:
        (project / name).unlink()
    cache = tmp_path / "cache"
    if where == "a file":
        cache.write_text("")
    elif where == "/dev/null":
        cache = Path("/dev/null")
    elif where == "a full file system":
        if not _full_tmpfs(cache):
            pytest.skip("cannot mount a tmpfs here")
    else:
        cache.mkdir()
        if subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(cache)], capture_output=True
        ).returncode:
            pytest.skip("cannot mount a tmpfs here")
    try:
        intent = str(project / "lockguard.toml")
        resolved = run("resolve", "--intent", intent, cache=cache)
        assert resolved.returncode == 0, resolved.stderr
        assert resolved.stderr.count("warning: the cache folder") == 1, resolved.stderr
        assert {
            p.name: p.read_bytes() for p in project.iterdir() if p.name != "lockguard.toml"
        } == locks
        checked = run("check", "--intent", intent, cache=cache)
        assert checked.returncode == 0 and checked.stdout == check_output
        assert checked.stderr.count("warning: the cache folder") == 1, checked.stderr
    finally:
        if where in ("a full file system", "a read-only file system"):
            subprocess.run(["umount", str(cache)], check=False)
