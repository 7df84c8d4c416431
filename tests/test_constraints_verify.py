"""`lockguard constraints verify`: compares torch rows with wheel METADATA read by range requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REFERENCE_METADATA
from tests.support.wheels import build_wheel


def real_metadata(name: str) -> str:
    text = (REFERENCE_METADATA / f"{name}.METADATA").read_text()
    return text.split("\n", 1)[1]  # drop the provenance line


def test_verify_reports_differences_from_local_index(tmp_path: Path, local_index, lg):
    wheels = tmp_path / "wheels"
    same = real_metadata("torch-2.1.0-cp311-cp311-manylinux1_x86_64")
    changed = same.replace("Version: 2.1.0", "Version: 2.1.2").replace(
        "nvidia-nccl-cu12 (==2.18.1)", "nvidia-nccl-cu12 (==2.19.3)")
    tag = "cp311-cp311-manylinux1_x86_64"
    local_index.add(build_wheel(wheels, "torch", "2.1.0", tag=tag, metadata=same, padding=300_000))
    local_index.add(build_wheel(wheels, "torch", "2.1.2", tag=tag, metadata=changed, padding=300_000))
    local_index.add(build_wheel(wheels, "torch", "2.16.0", tag="cp311-cp311-manylinux_2_28_x86_64"))
    result = lg("constraints", "verify", "--index", local_index.url, "--json")
    assert result.exit_code == 1
    diffs = json.loads(result.stdout)["data"]["differences"]
    by_version: dict[str, list] = {}
    for d in diffs:
        by_version.setdefault(d["version"], []).append(d)
    assert "2.1.0" not in by_version  # identical METADATA: no difference
    fields = {(d["field"], d["knowledge"], d["live"]) for d in by_version["2.1.2"]}
    assert any("nvidia-nccl-cu12==2.18.1" in k for _f, k, _l in fields)
    assert any("nvidia-nccl-cu12==2.19.3" in live for _f, _k, live in fields)
    assert by_version["2.16.0"][0]["field"] == "release"
    assert by_version["2.2.0"][0]["live"] == "not on the index"
    # metadata came from range requests: far fewer bytes than the two padded wheels
    assert local_index.bytes_sent < 300_000
    assert all(rng for method, path, rng in local_index.requests if path.endswith(".whl"))


@pytest.mark.network
def test_verify_against_live_pypi(lg):
    result = lg("constraints", "verify", "--json")
    body = json.loads(result.stdout)
    assert result.exit_code == 0, body["data"]["differences"]
    assert body["data"]["checked"] >= 28
