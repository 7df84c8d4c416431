"""Issue 21's example on live PyPI (opt-in: -m network): a lock made with an exclude-newer cut-off
keeps every pin when the cut-off goes and one package is added, `resolve --check` then passes
although newer releases of all of them exist, and `--upgrade-package urllib3` moves urllib3
alone."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.releases import pins

FIRST = """\
python = "3.11"
cuda = "none"
channels = []
pip = ["requests"]
exclude-newer = "2023-06-01T00:00:00Z"
"""
LATER = """\
python = "3.11"
cuda = "none"
channels = []
pip = ["requests", "six"]
"""
LOCKED = {"requests": "2.31.0", "urllib3": "2.0.2", "certifi": "2023.5.7", "idna": "3.4"}


@pytest.mark.network
def test_live_pypi_relock_keeps_the_pins_and_moves_only_what_is_asked(tmp_path, lg, monkeypatch):
    (tmp_path / "lockguard.toml").write_text(FIRST)
    monkeypatch.chdir(tmp_path)
    first = lg("resolve")
    assert first.exit_code == 0, first.stderr
    assert {n: v for n, v in pins(tmp_path).items() if n in LOCKED} == LOCKED
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "lock"],
        cwd=tmp_path,
        check=True,
    )
    (tmp_path / "lockguard.toml").write_text(LATER)
    relock = lg("resolve")
    assert relock.exit_code == 0, relock.stderr
    after = pins(tmp_path)
    assert {n: v for n, v in after.items() if n in LOCKED} == LOCKED
    assert "six" in after
    assert "linux-64: 1 added" in relock.stderr
    assert [line.split()[:2] for line in relock.stderr.splitlines() if line.startswith("  ")] == [
        ["added", "six"]
    ]
    check = lg("resolve", "--check")
    assert check.exit_code == 0 and "the lock files are current" in check.stderr
    outdated = lg("outdated", "--json")
    assert outdated.exit_code == 0
    assert "urllib3" in outdated.stdout  # newer releases of all of them exist
    moved = lg("resolve", "--upgrade-package", "urllib3")
    assert moved.exit_code == 0, moved.stderr
    now = pins(tmp_path)
    assert now["urllib3"] != "2.0.2"
    assert {n: v for n, v in now.items() if n != "urllib3"} == {
        n: v for n, v in after.items() if n != "urllib3"
    }
    diff = lg("diff", "--git", "HEAD")
    assert diff.exit_code == 1
    assert [line.split()[:2] for line in diff.stdout.splitlines()[1:]] == [
        ["added", "six"],
        ["upgraded", "urllib3"],
    ]
