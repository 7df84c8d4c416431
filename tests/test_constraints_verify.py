"""`lockguard constraints verify`: compares torch rows with wheel METADATA read by range
requests."""

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
        "nvidia-nccl-cu12 (==2.18.1)", "nvidia-nccl-cu12 (==2.19.3)"
    )
    tag = "cp311-cp311-manylinux1_x86_64"
    local_index.add(build_wheel(wheels, "torch", "2.1.0", tag=tag, metadata=same, padding=300_000))
    local_index.add(
        build_wheel(wheels, "torch", "2.1.2", tag=tag, metadata=changed, padding=300_000)
    )
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


def toolkit_metadata(version: str) -> str:
    return real_metadata(f"cuda_toolkit-{version}-py2.py3-none-any")


def test_verify_reads_cuda_toolkit_manifests_and_wheel_records(tmp_path: Path, local_index, lg):
    """Issue 23: components.toml is checked against NVIDIA's cuda-toolkit METADATA per release and
    shared_files.toml against the RECORD of the CUDA wheels, both read from the index."""
    wheels = tmp_path / "wheels"
    add = local_index.add
    for version in ("13.0.0", "13.0.1", "13.0.3.0"):
        add(
            build_wheel(
                wheels,
                "cuda-toolkit",
                version,
                tag="py2.py3-none-any",
                metadata=toolkit_metadata(version),
            )
        )
    moved = toolkit_metadata("13.0.2").replace("nvidia-nvvm==13.0.88.*", "nvidia-nvvm==13.0.99.*")
    add(build_wheel(wheels, "cuda-toolkit", "13.0.2", tag="py2.py3-none-any", metadata=moved))
    add(
        build_wheel(
            wheels,
            "cuda-toolkit",
            "13.6.0",
            tag="py2.py3-none-any",
            metadata=toolkit_metadata("13.0.2").replace("Version: 13.0.2", "Version: 13.6.0"),
        )
    )
    linux = "py3-none-manylinux_2_27_x86_64"
    same = {"nvidia/nccl/lib/libnccl.so.2": b"\x7fELF", "nvidia/__init__.py": b""}
    add(build_wheel(wheels, "nvidia-nccl-cu12", "2.32.3", tag=linux, files=same))
    add(build_wheel(wheels, "nvidia-nccl-cu13", "2.32.3", tag=linux, files=same))
    add(
        build_wheel(
            wheels,
            "nvidia-nvimgcodec-cu12",
            "0.9.0",
            tag=linux,
            files={"nvidia/nvimgcodec/a.so": b"1"},
        )
    )
    add(
        build_wheel(
            wheels,
            "nvidia-nvimgcodec-cu13",
            "0.9.0",
            tag=linux,
            files={"nvidia/nvimgcodec/b.so": b"2"},
        )
    )
    for major in ("12", "13"):  # their own folders, and the namespace's empty __init__.py: no clash
        add(
            build_wheel(
                wheels,
                f"nvidia-cutlass-dsl-libs-cu{major}",
                "4.8.0",
                tag=linux,
                files={
                    f"nvidia_cutlass_dsl/cu{major}/lib/libcute_dsl_runtime.so": b"\x7fELF",
                    "nvidia/__init__.py": b"",
                },
            )
        )
    clash = {"nvidia/cu13/include/same.h": b"//"}
    add(build_wheel(wheels, "nvidia-cuda-cccl", "13.0.85", tag=linux, files=clash))
    add(build_wheel(wheels, "nvidia-cuda-crt", "13.0.88", tag=linux, files=clash))
    local_index.add(
        build_wheel(
            wheels,
            "torch",
            "2.1.0",
            tag="cp311-cp311-manylinux1_x86_64",
            metadata=real_metadata("torch-2.1.0-cp311-cp311-manylinux1_x86_64"),
        )
    )
    result = lg("constraints", "verify", "--index", local_index.url, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)["data"]
    diffs = {(d["version"], d["field"]): d for d in data["differences"]}
    nvvm = diffs[("CUDA 13.0", "nvvm")]
    assert nvvm["knowledge"] == "13.0.48, 13.0.88" and nvvm["live"] == "13.0.48, 13.0.88, 13.0.99"
    assert nvvm["origin"].startswith("constraints/components.toml:")
    assert ("CUDA 13.0", "cublas") not in diffs  # pinned the same: no difference
    assert diffs[("CUDA 13.6", "release")]["live"] == "cuda-toolkit 13.6.0 on the index"
    assert ("nvidia-nccl-cu12, nvidia-nccl-cu13", "shared path") not in diffs  # the row holds
    row = diffs[("nvidia-nvimgcodec-cu12, nvidia-nvimgcodec-cu13", "shared path")]
    assert (
        row["knowledge"].startswith("nvidia/nvimgcodec/") and "does not install it" in row["live"]
    )
    assert (
        diffs[("nvidia-cuda-cccl, nvidia-cuda-crt", "shared path")]["live"]
        == "nvidia/cu13/include/same.h"
    )
    assert not [k for k in diffs if "cutlass" in k[0] and k[1] == "shared path"]
    assert data["cuda_toolkit_releases"] == 5 and data["wheels_read"] == 8
    # range requests only
    assert all(rng for _m, path, rng in local_index.requests if path.endswith(".whl"))
