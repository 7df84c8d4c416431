"""torch's family moves as one (issue 21): torchvision, torchaudio, triton and the nvidia-* wheels
torch brings in are only valid together, so an upgrade of one frees them all; an upgrade the
intent or the knowledge holds back says why; one that cannot be met is exit 3. Fake but real-shaped
torch/torchvision/triton/nvidia wheels on a local index (torch's versions are the knowledge's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.releases import Releases, months_later, pins, write_intent

LINUX = 'platform_system == "Linux" and platform_machine == "x86_64"'
TORCH_TAG = "cp311-cp311-manylinux1_x86_64"
NVIDIA_TAG = "py3-none-manylinux1_x86_64"


def publish_torch(releases: Releases, torch: str, nccl: str, triton: str, vision: str) -> None:
    releases.publish(
        "torch",
        torch,
        tag=TORCH_TAG,
        requires=[
            "filelock",
            f"nvidia-nccl-cu12=={nccl}; {LINUX}",
            f"nvidia-cusparse-cu12==12.1.0.106; {LINUX}",
            f"triton=={triton}; {LINUX}",
        ],
    )
    releases.publish("nvidia-nccl-cu12", nccl, tag=NVIDIA_TAG)
    releases.publish(
        "triton", triton, tag="cp311-cp311-manylinux2014_x86_64", requires=["filelock"]
    )
    releases.publish("torchvision", vision, tag=TORCH_TAG, requires=[f"torch=={torch}"])


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    publish_torch(found, "2.1.2", "2.18.1", "2.1.0", "0.16.2")
    found.publish(
        "nvidia-cusparse-cu12", "12.1.0.106", tag=NVIDIA_TAG, requires=["nvidia-nvjitlink-cu12"]
    )
    found.publish("nvidia-nvjitlink-cu12", "12.3.101", tag=NVIDIA_TAG)
    found.publish("filelock", "3.13.1")
    found.publish("jinja2", "3.1.2")
    return found


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


@pytest.fixture
def project(tmp_path, releases, lg, monkeypatch) -> Path:
    """Locked when torch 2.1 was current; months later torch 2.2 (with its own NCCL, triton and
    torchvision), a newer nvJitLink and a newer jinja2 are out, and the intent no longer caps
    torch."""
    project = tmp_path / "p"
    write_intent(project, releases.index.url, ["torch<2.2", "torchvision", "jinja2"], cuda="12.1")
    first = resolve(lg, project)
    assert first.exit_code == 0, first.stderr
    assert (
        pins(project)["torch"] == "2.1.2" and pins(project)["nvidia-nvjitlink-cu12"] == "12.3.101"
    )
    publish_torch(releases, "2.2.0", "2.19.3", "2.2.0", "0.17.0")
    releases.publish("nvidia-nvjitlink-cu12", "12.4.127", tag=NVIDIA_TAG)
    releases.publish("jinja2", "3.1.4")
    months_later(monkeypatch, tmp_path, "later")
    write_intent(project, releases.index.url, ["torch", "torchvision", "jinja2"], cuda="12.1")
    return project


LOCKED = {
    "torch": "2.1.2",
    "torchvision": "0.16.2",
    "triton": "2.1.0",
    "nvidia-nccl-cu12": "2.18.1",
    "nvidia-cusparse-cu12": "12.1.0.106",
    "nvidia-nvjitlink-cu12": "12.3.101",
    "filelock": "3.13.1",
    "jinja2": "3.1.2",
}


def test_a_relock_keeps_the_whole_cuda_stack(project, lg):
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert pins(project) == LOCKED
    # the intent changed: the headers (intent hash) are rewritten, no package moves (issue 30:
    # never "unchanged" when a byte changes)
    assert "linux-64: no package moved; requirements.lock rewritten" in result.stderr


def test_upgrading_torchvision_moves_the_torch_family_as_one(project, lg):
    result = resolve(
        lg, project, "--upgrade-package", "torchvision", "--upgrade-package", "jinja2", "--json"
    )
    assert result.exit_code == 0, result.stderr
    assert pins(project) == {
        **LOCKED,
        "torch": "2.2.0",
        "torchvision": "0.17.0",
        "triton": "2.2.0",
        "nvidia-nccl-cu12": "2.19.3",
        "nvidia-nvjitlink-cu12": "12.4.127",
        "jinja2": "3.1.4",
    }
    # the CUDA stack first, then the rest
    lines = result.stderr.splitlines()
    stack, other = lines.index("  CUDA stack:"), lines.index("  other:")
    assert stack < other
    assert [line.split()[1] for line in lines[stack + 1 : other]] == [
        "nvidia-nccl-cu12",
        "nvidia-nvjitlink-cu12",
        "torch",
        "torchvision",
        "triton",
    ]
    assert lines[other + 1].split() == ["upgraded", "jinja2", "3.1.2", "->", "3.1.4"]
    changes = json.loads(result.stdout)["data"]["changes"]["platforms"]["linux-64"]
    assert {
        "name": "torch",
        "side": "pip",
        "change": "upgraded",
        "old": "2.1.2",
        "new": "2.2.0",
    } in changes["cuda_stack"]
    assert [c["name"] for c in changes["other"]] == ["jinja2"]


def test_an_upgrade_the_intent_holds_back_says_why(project, releases, lg):
    write_intent(
        project, releases.index.url, ["torch==2.1.*", "torchvision", "jinja2"], cuda="12.1"
    )
    result = resolve(lg, project, "--upgrade-package", "torch")
    assert result.exit_code == 0, result.stderr
    assert pins(project)["torch"] == "2.1.2"
    assert "torch stays 2.1.2, not 2.2.0: the intent pins torch==2.1.*" in result.stderr


def test_an_upgrade_the_cuda_stack_cannot_meet_is_exit_3(project, releases, lg):
    releases.publish("torch", "2.7.1", tag=TORCH_TAG)
    before = (project / "requirements.lock").read_bytes()
    result = resolve(lg, project, "--upgrade-package", "torch==2.7.1")
    assert result.exit_code == 3, result.stderr
    assert "--upgrade-package torch==2.7.1 needs torch==2.7.1" in result.stderr
    assert "torch 2.7 was published for cu118, cu126 and cu128, not cu121" in result.stderr
    assert "--upgrade-package torch==2.7.1 needs torch==2.7.1  (command line)" in result.stderr
    assert (project / "requirements.lock").read_bytes() == before
