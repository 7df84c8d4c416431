"""`lockguard resolve`, conda side: rattler solves against a local channel of tiny real packages
shaped like conda-forge's CUDA packaging; environment.yml and conda-lock.yml are checked with
conda-lock's own parser and `conda-lock render`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.lockfiles import environment_yml, requirements_lock
from lockguard.lockfiles.headers import is_sealed_intact, read_header
from tests.support.conda_channel import build_channel


@pytest.fixture
def channel(tmp_path) -> Path:
    return build_channel(tmp_path / "conda")


def intent(world, project: Path, channel: Path, **kw):
    return world.intent(project, channels=[channel.as_uri()], **kw)


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def conda_of(project: Path, name: str = "environment.yml") -> dict[str, tuple]:
    return environment_yml.parse((project / name).read_text()).conda


def pip_of(project: Path, name: str = "requirements.lock") -> dict[str, str]:
    return {
        n: e.version
        for n, e in requirements_lock.parse((project / name).read_text()).entries.items()
    }


def test_cuda_12_1_plan_is_solved_and_pinned_to_builds(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(world, project, channel, pip=["torch==2.1.*"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    conda = conda_of(project)
    assert conda["cuda-version"][:2] == ("12.1", "h0")
    assert conda["cuda-nvcc"][0] == "12.1.105" and conda["cuda-cudart-dev"][0] == "12.1.105"
    # newest gcc nvcc 12.1 takes
    assert conda["gcc_linux-64"][0] == "12.3.0" and conda["gxx_linux-64"][0] == "12.3.0"
    assert conda["sysroot_linux-64"][0] == "2.17" and conda["python"][0] == "3.11.8"
    # torch's wheel brings NCCL
    assert "pip" in conda and "cudatoolkit" not in conda and "nccl" not in conda
    env = environment_yml.parse((project / "environment.yml").read_text())
    assert env.pip == {
        n: (v, env.pip[n][1]) for n, v in pip_of(project).items()
    }  # the same pins as the lock
    text = (project / "environment.yml").read_text()
    assert "  - cuda-version=12.1=h0\n" in text and is_sealed_intact(text)
    assert read_header(text).fields["conda-side"] == "solved"


def test_cuda_11_8_plan_uses_cudatoolkit_and_gcc_11(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(world, project, channel, cuda="11.8", pip=["torch==2.1.2"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    conda = conda_of(project)
    assert conda["cuda-version"][0] == "11.8" and conda["cudatoolkit"][0] == "11.8.0"
    assert conda["gcc_linux-64"][0] == "11.4.0" and "cuda-nvcc" not in conda
    assert pip_of(project)["torch"] == "2.1.2+cu118"


def test_driver_floor_that_rules_out_cuda_12_is_explained(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(world, project, channel, pip=["torch==2.1.*"], extra='driver = "470.82.01"\n')
    result = resolve(lg, project)
    assert result.exit_code == 3
    assert "CUDA 12.1 needs driver >= 525.60.13; the floor is 470.82.01" in result.stderr


def test_torch_2_7_chooses_sysroot_2_28(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(world, project, channel, cuda="12.6", pip=["torch==2.7.*"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert conda_of(project)["sysroot_linux-64"][0] == "2.28"  # torch 2.7 wheels are manylinux_2_28
    assert conda_of(project)["gcc_linux-64"][0] == "13.2.0"  # CUDA 12.6 nvcc accepts gcc <= 13
    assert pip_of(project)["torch"] == "2.7.1" and pip_of(project)["nvidia-nccl-cu12"] == "2.26.2"


def test_python_packages_from_conda_are_not_installed_again_by_pip(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(
        world, project, channel, cuda="none", pip=["jinja2", "numpy"], extra='conda = ["numpy"]\n'
    )
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert conda_of(project)["numpy"][0] == "1.26.4"
    assert "numpy" not in pip_of(project) and "jinja2" in pip_of(project)
    assert (
        "# numpy==1.26.4 is installed by the conda side"
        in (project / "requirements.lock").read_text()
    )


def test_library_asked_on_both_sides_must_agree(tmp_path, world, channel, lg):
    agree = tmp_path / "agree"
    intent(world, agree, channel, pip=["torch==2.1.*"], extra='conda = ["nccl"]\n')
    result = resolve(lg, agree)
    assert result.exit_code == 0, result.stderr
    assert (
        conda_of(agree)["nccl"][0] == "2.18.1.1" and pip_of(agree)["nvidia-nccl-cu12"] == "2.18.1"
    )
    clash = tmp_path / "clash"
    intent(world, clash, channel, pip=["torch==2.1.*"], extra='conda = ["nccl=2.19"]\n')
    result = resolve(lg, clash)
    assert result.exit_code == 3
    assert "nccl=2.19" in result.stderr and "nvidia-nccl-cu12 2.18.1" in result.stderr
    assert "same library" in result.stderr


def test_two_platforms_in_one_lock_and_conda_lock_tools_accept_it(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(
        world,
        project,
        channel,
        cuda="none",
        pip=["jinja2"],
        platforms=["linux-64", "linux-aarch64"],
    )
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert conda_of(project, "environment.linux-aarch64.yml")["python"][0] == "3.11.8"
    aarch64 = (project / "environment.linux-aarch64.yml").read_text()
    assert (
        "/linux-aarch64/python-3.11.8" not in aarch64
        and "  - python=3.11.8=h0_cpython\n" in aarch64
    )
    from conda_lock.lockfile import parse_conda_lock_file

    lock = parse_conda_lock_file(project / "conda-lock.yml")
    assert sorted(lock.metadata.platforms) == ["linux-64", "linux-aarch64"]
    managers = {(p.manager, p.name) for p in lock.package}
    assert ("conda", "python") in managers and ("pip", "jinja2") in managers
    assert all(p.hash.md5 for p in lock.package if p.manager == "conda")
    render = subprocess.run(
        [
            sys.executable,
            "-m",
            "conda_lock",
            "render",
            "--kind",
            "explicit",
            "-p",
            "linux-64",
            "-p",
            "linux-aarch64",
            "conda-lock.yml",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert render.returncode == 0, render.stdout + render.stderr
    explicit = (project / "conda-linux-64.lock").read_text()
    assert "@EXPLICIT" in explicit and "/linux-64/python-3.11.8-h0_cpython.tar.bz2#" in explicit
    assert (
        "/linux-aarch64/python-3.11.8-h0_cpython.tar.bz2#"
        in (project / "conda-linux-aarch64.lock").read_text()
    )


def test_byte_stable_second_run(tmp_path, world, channel, lg):
    project = tmp_path / "p"
    intent(world, project, channel, pip=["torch==2.1.*"])
    assert resolve(lg, project).exit_code == 0
    first = {p.name: p.read_bytes() for p in project.iterdir() if p.suffix in (".yml", ".lock")}
    assert resolve(lg, project).exit_code == 0
    assert {
        p.name: p.read_bytes() for p in project.iterdir() if p.suffix in (".yml", ".lock")
    } == first
    assert resolve(lg, project, "--check").exit_code == 0


def test_unreachable_channel_is_exit_4_unless_knowledge_only(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, channels=["http://127.0.0.1:9/conda-forge"], pip=["torch==2.1.*"])
    result = resolve(lg, project)
    assert result.exit_code == 4
    assert (
        "http://127.0.0.1:9/conda-forge" in result.stderr
        and "--conda-from-knowledge" in result.stderr
    )
    assert not (project / "environment.yml").exists()  # nothing half-written
    result = resolve(lg, project, "--conda-from-knowledge", "--json")
    assert result.exit_code == 0, result.stderr
    env = (project / "environment.yml").read_text()
    assert read_header(env).fields["conda-side"] == "knowledge-only (not solved)"
    assert (
        "  - cuda-version=12.1\n" in env
        and "  - cuda-nvcc=12.1\n" in env
        and "  - sysroot_linux-64=2.17\n" in env
    )
    from conda_lock.lockfile import parse_conda_lock_file

    lock = parse_conda_lock_file(project / "conda-lock.yml")
    assert {p.manager for p in lock.package} == {"pip"}
    assert "not solved" in lock.metadata.custom_metadata["conda-side"]
    body = json.loads(result.stdout)
    assert body["data"]["conda_solved"] is False
