"""The conda side keeps its locked records too (issue 21): conda-lock.yml's records go to rattler as
locked_packages (the channel's own copies of them); --upgrade-package frees one; a locked record no
channel lists any more is named. A local channel of tiny real packages, indexed by rattler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockguard.lockfiles import environment_yml
from tests.support.conda_channel import Pkg, build_channel, cuda_forge_packages
from tests.support.releases import Releases, write_intent

ZLIBS = ("1.2.13", "1.3.1")


@pytest.fixture
def channel(tmp_path) -> Path:
    extra = [Pkg("zlib", version, "h0") for version in ZLIBS] + [
        Pkg("xz", version, "h0") for version in ("5.4.6", "5.6.2")
    ]
    return build_channel(tmp_path / "conda", cuda_forge_packages() + extra)


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("hjson", "3.1.0")
    return found


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def conda_of(project: Path) -> dict[str, str]:
    return {
        n: v
        for n, (v, _b, _l) in environment_yml.parse(
            (project / "environment.yml").read_text()
        ).conda.items()
    }


def test_the_conda_side_keeps_its_locked_records_until_freed(tmp_path, channel, releases, lg):
    project = tmp_path / "p"
    write_intent(
        project,
        releases.index.url,
        ["hjson"],
        channels=[channel.as_uri()],
        conda=["zlib<1.3", "xz<5.5"],
    )
    assert resolve(lg, project).exit_code == 0
    assert conda_of(project)["zlib"] == "1.2.13" and conda_of(project)["xz"] == "5.4.6"
    # the caps go: a solve from scratch would take zlib 1.3.1 and xz 5.6.2; the lock's records stay
    write_intent(
        project, releases.index.url, ["hjson"], channels=[channel.as_uri()], conda=["zlib", "xz"]
    )
    kept = resolve(lg, project, "--json")
    assert kept.exit_code == 0, kept.stderr
    assert conda_of(project)["zlib"] == "1.2.13" and conda_of(project)["xz"] == "5.4.6"
    # no package moves; the headers carry the new intent hash (never "unchanged" then: issue 30)
    changes = json.loads(kept.stdout)["data"]["changes"]["platforms"]["linux-64"]
    assert changes["counts"] == {} and changes["facts"] == [] and changes["rewritten"]
    (tmp_path / "before").mkdir()
    (tmp_path / "before" / "conda-lock.yml").write_bytes((project / "conda-lock.yml").read_bytes())
    freed = resolve(lg, project, "--upgrade-package", "zlib", "--json")
    assert freed.exit_code == 0, freed.stderr
    assert conda_of(project)["zlib"] == "1.3.1" and conda_of(project)["xz"] == "5.4.6"
    other = json.loads(freed.stdout)["data"]["changes"]["platforms"]["linux-64"]["other"]
    assert other == [
        {
            "name": "zlib",
            "side": "conda",
            "change": "upgraded",
            "old": "1.2.13=h0",
            "new": "1.3.1=h0",
        }
    ]
    assert "zlib (conda)" in freed.stderr
    pinned = resolve(lg, project, "--upgrade-package", "xz==5.6.2")
    assert pinned.exit_code == 2 and "xz is a conda package" in pinned.stderr
    # conda-lock.yml holds both sides: diff reads the conda records from it
    diff = lg("diff", str(tmp_path / "before" / "conda-lock.yml"), str(project / "conda-lock.yml"))
    assert diff.exit_code == 1
    assert diff.stdout.splitlines() == [
        "linux-64: 1 upgraded",
        "  upgraded    zlib (conda)  1.2.13=h0 -> 1.3.1=h0",
    ]


def test_a_locked_conda_record_the_channel_lost_is_named(tmp_path, channel, releases, lg):
    import asyncio

    import rattler.index

    project = tmp_path / "p"
    write_intent(
        project, releases.index.url, ["hjson"], channels=[channel.as_uri()], conda=["xz<5.5"]
    )
    assert resolve(lg, project).exit_code == 0
    write_intent(project, releases.index.url, ["hjson"], channels=[channel.as_uri()], conda=["xz"])
    (channel / "linux-64" / "xz-5.4.6-h0.tar.bz2").unlink()
    asyncio.run(rattler.index.index_fs(channel, write_zst=False, write_shards=False))
    result = resolve(lg, project, "--refresh")
    assert result.exit_code == 0, result.stderr
    assert "conda xz 5.4.6 h0 is locked, but no channel lists it any more" in result.stderr
    assert conda_of(project)["xz"] == "5.6.2"
