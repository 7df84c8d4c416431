"""`lockguard outdated` (issue 21): the locked packages with newer releases the intent allows, what
holds the others back (a requirement of the intent, a package's metadata, a knowledge rule), and
nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.releases import Releases, months_later, pins, write_intent
from tests.test_relock_torch import NVIDIA_TAG, publish_torch


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2"])
    found.publish("lib", "1.0")
    found.publish("certs", "2023.1")
    return found


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def test_outdated_lists_newer_allowed_releases_and_what_holds_the_others_back(
    tmp_path, releases, lg, monkeypatch
):
    project = tmp_path / "p"
    write_intent(project, releases.index.url, ["app<1.1", "certs"])
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    releases.publish("app", "1.1", requires=["lib<3"])
    releases.publish("lib", "1.1")
    releases.publish("lib", "2.5")
    releases.publish("certs", "2026.10")
    months_later(monkeypatch, tmp_path, "later")
    before = snapshot(project)
    result = lg("outdated", "--intent", str(project / "lockguard.toml"), "--json")
    assert result.exit_code == 0, result.stderr
    rows = {
        r["name"]: r for r in json.loads(result.stdout)["data"]["platforms"]["linux-64"]["outdated"]
    }
    assert rows["app"] == {
        "name": "app",
        "side": "pip",
        "locked": "1.0",
        "allowed": "1.0",
        "newest": "1.1",
        "held_back_by": ["the intent pins app<1.1"],
    }
    assert rows["lib"] == {
        "name": "lib",
        "side": "pip",
        "locked": "1.0",
        "allowed": "1.1",
        "newest": "2.5",
        "held_back_by": ["app 1.0 requires lib<2"],
    }
    assert rows["certs"] == {
        "name": "certs",
        "side": "pip",
        "locked": "2023.1",
        "allowed": "2026.10",
        "newest": "2026.10",
        "held_back_by": [],
    }
    text = lg("outdated", "--intent", str(project / "lockguard.toml"))
    assert text.exit_code == 0
    assert "linux-64: 2 of 3 locked packages have newer allowed releases" in text.stderr
    table = text.stdout.splitlines()
    assert table[0].split() == ["package", "locked", "allowed", "newest", "held", "back", "by"]
    assert ["lib", "1.0", "1.1", "2.5", "app 1.0 requires lib<2"] in [
        line.split(None, 4) for line in table
    ]
    assert snapshot(project) == before  # read-only: no byte, no mtime, no new file


def test_a_knowledge_rule_that_holds_a_package_back_is_named(
    tmp_path, local_index, lg, monkeypatch
):
    """torch 2.1 was built against NumPy 1: the knowledge's hazard rule keeps numpy below 2."""
    releases = Releases(local_index, tmp_path / "wheels")
    publish_torch(releases, "2.1.2", "2.18.1", "2.1.0", "0.16.2")
    releases.publish("nvidia-cusparse-cu12", "12.1.0.106", tag=NVIDIA_TAG)
    releases.publish("filelock", "3.13.1")
    numpy_tag = "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"
    releases.publish("numpy", "1.26.4", tag=numpy_tag)
    project = tmp_path / "p"
    write_intent(project, local_index.url, ["torch==2.1.*", "numpy"], cuda="12.1")
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    releases.publish("numpy", "2.0.0", tag=numpy_tag)
    months_later(monkeypatch, tmp_path, "later")
    result = lg("outdated", "--intent", str(project / "lockguard.toml"), "--json")
    assert result.exit_code == 0, result.stderr
    rows = {
        r["name"]: r for r in json.loads(result.stdout)["data"]["platforms"]["linux-64"]["outdated"]
    }
    assert rows["numpy"]["allowed"] == "1.26.4" and rows["numpy"]["newest"] == "2.0.0"
    [reason] = rows["numpy"]["held_back_by"]
    assert reason.startswith("knowledge: numpy<2 (knowledge: ") and "hazards.toml" in reason
    assert pins(project)["numpy"] == "1.26.4"


def test_outdated_without_a_lock_is_exit_2(tmp_path, releases, lg):
    project = tmp_path / "p"
    write_intent(project, releases.index.url, ["app"])
    result = lg("outdated", "--intent", str(project / "lockguard.toml"))
    assert (
        result.exit_code == 2
        and "no lock" in result.stderr
        and "lockguard resolve" in result.stderr
    )
    assert not (project / "requirements.lock").exists()
