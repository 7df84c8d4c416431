"""The scan's memos (io/env/scan_memo.py): a dist-info's parse and a library's SONAME are reused
only while the files they came from are unchanged; what exists is checked live every time; a memo
that is damaged or a file that just changed is never trusted."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lockguard.errors import InputError
from lockguard.io.env import dist_records, loader_paths, scan_memo
from lockguard.io.env.prefix_scan import scan_prefix
from tests.support import cache_entries
from tests.support.envs import compile_library
from tests.support.fuzz_env import install_dist, site_of


@pytest.fixture
def memoizing(monkeypatch):
    """Files written a moment ago count as old enough to memoize (the tests write them just now)."""
    monkeypatch.setattr(scan_memo, "RACY_NS", 0)


@pytest.fixture
def env(venv) -> Path:
    install_dist(site_of(venv), "markupsafe", "2.1.5")
    install_dist(site_of(venv), "jinja2", "3.1.3")
    time.sleep(0.05)  # a new timestamp tick: a file written later has another ctime
    return venv


def _parses(monkeypatch) -> list[str]:
    """The dist-info folders parsed (not taken from the memo) from now on."""
    parsed: list[str] = []
    real = dist_records.parse_dist_info

    def counting(info, site, root):
        parsed.append(os.path.basename(info))
        return real(info, site, root)

    monkeypatch.setattr(dist_records, "parse_dist_info", counting)
    return parsed


def _dist(snap, name):
    return next(d for d in snap.dists if d.name == name)


def _memo_files(kind: str) -> list[Path]:
    """The cache entries holding the scan's memos of `kind` (their header names it)."""
    return [
        p
        for p in cache_entries.entries("env-scan")
        if f"{scan_memo.FORMAT} {kind}\0".encode() in cache_entries.payload(p)[:4096]
    ]


def test_a_second_scan_reads_the_parse_from_the_memo(env, memoizing, monkeypatch):
    first = scan_prefix(env)
    parsed = _parses(monkeypatch)
    second = scan_prefix(env)
    assert parsed == []
    assert second.dists == first.dists and {"jinja2", "markupsafe"} <= {d.name for d in first.dists}


def test_a_file_deleted_after_the_memo_is_still_absent(env, memoizing, monkeypatch):
    scan_prefix(env)
    (site_of(env) / "markupsafe" / "__init__.py").unlink()  # the RECORD is unchanged: a memo hit
    parsed = _parses(monkeypatch)
    snap = scan_prefix(env)
    assert parsed == []
    assert _dist(snap, "markupsafe").absent == (
        str((site_of(env) / "markupsafe/__init__.py").relative_to(env)),
    )


def test_a_record_rewritten_with_the_same_size_and_mtime_is_parsed_again(
    env, memoizing, monkeypatch
):
    scan_prefix(env)
    record = next(site_of(env).glob("markupsafe-*.dist-info")) / "RECORD"
    before = os.stat(record)
    text = record.read_text()
    record.write_text(text.replace("markupsafe/__init__.py", "markupsafe/__init__.pz"))
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))  # only the ctime tells
    assert (
        os.stat(record).st_size == before.st_size
        and os.stat(record).st_mtime_ns == before.st_mtime_ns
    )
    parsed = _parses(monkeypatch)
    snap = scan_prefix(env)
    assert parsed == [record.parent.name]
    assert any(p.endswith("markupsafe/__init__.pz") for p in _dist(snap, "markupsafe").absent)


def test_files_changed_in_the_last_seconds_are_not_memoized(env, monkeypatch):
    scan_prefix(env)  # the dist-infos were written just now: racy, parsed every time until older
    parsed = _parses(monkeypatch)
    scan_prefix(env)
    assert {"jinja2-3.1.3.dist-info", "markupsafe-2.1.5.dist-info"} <= set(parsed)


def test_a_record_replaced_by_a_fifo_is_bad_input_after_a_memo(env, memoizing):
    scan_prefix(env)
    record = next(site_of(env).glob("markupsafe-*.dist-info")) / "RECORD"
    record.unlink()
    os.mkfifo(record)
    with pytest.raises(InputError, match="FIFO"):
        scan_prefix(env)


@pytest.mark.parametrize("damage", ["checksum", "schema", "truncated", "header"])
def test_a_damaged_memo_is_ignored(env, memoizing, monkeypatch, damage):
    first = scan_prefix(env)
    [memo] = _memo_files("dist-info")
    data = memo.read_bytes()
    # a path changed inside a well-formed memo: the checksum no longer fits
    if damage == "checksum":
        memo.write_bytes(data.replace(b"markupsafe/__init__.py", b"markupsafe/__init__.pz"))
    elif damage == "schema":  # a valid cache entry holding well-formed msgpack of the wrong shape
        import msgspec

        header = msgspec.msgpack.decode(cache_entries.payload(memo))[0]
        cache_entries.rewrite(memo, msgspec.msgpack.encode([header, {"x.dist-info": [[], [1, 2]]}]))
    elif damage == "truncated":
        memo.write_bytes(data[: len(data) // 2])
    else:  # a valid entry holding the memo of another lockguard version
        cache_entries.rewrite(
            memo, cache_entries.payload(memo).replace(b"lockguard ", b"lockguarD ", 1)
        )
    parsed = _parses(monkeypatch)
    second = scan_prefix(env)
    assert {"jinja2-3.1.3.dist-info", "markupsafe-2.1.5.dist-info"} <= set(parsed)
    assert second.dists == first.dists


def test_a_dist_info_name_that_is_not_utf8_is_parsed_and_the_others_memoized(
    env, memoizing, monkeypatch
):
    folder = os.path.join(os.fsencode(site_of(env)), b"x\xff-1.0.dist-info")
    os.mkdir(folder)
    with open(os.path.join(folder, b"METADATA"), "wb") as handle:
        handle.write(b"Name: odd\nVersion: 1.0\n")
    time.sleep(0.05)
    first = scan_prefix(env)
    parsed = _parses(monkeypatch)
    assert scan_prefix(env).dists == first.dists
    assert parsed == [os.fsdecode(b"x\xff-1.0.dist-info")]


def test_an_unwritable_cache_only_costs_time(env, memoizing, monkeypatch, tmp_path):
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("")
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(blocked))
    assert scan_prefix(env).dists == scan_prefix(env).dists


def test_the_loader_path_sonames_come_from_the_memo(tmp_path, memoizing, monkeypatch):
    libs = tmp_path / "libs"
    if compile_library(libs, "libcudart.so.12", "libcudart.so.12") is None:
        pytest.skip("no C compiler")
    conf = tmp_path / "ld.so.conf.d"
    conf.mkdir()
    (conf / "cuda.conf").write_text(f"{libs}\n")
    time.sleep(0.05)
    first = loader_paths.library_dirs({}, conf, tmp_path / "prefix")
    assert first[0].libraries == (("libcudart.so.12", "libcudart.so.12"),)

    def no_parse(path):
        raise AssertionError(f"{path} parsed again")

    real = loader_paths.soname
    monkeypatch.setattr(loader_paths, "soname", no_parse)
    assert loader_paths.library_dirs({}, conf, tmp_path / "prefix") == first
    monkeypatch.setattr(loader_paths, "soname", real)
    # another library under the same name
    compile_library(libs, "libcudart.so.12", "libcudart.so.13")
    assert loader_paths.library_dirs({}, conf, tmp_path / "prefix")[0].libraries == (
        ("libcudart.so.12", "libcudart.so.13"),
    )
