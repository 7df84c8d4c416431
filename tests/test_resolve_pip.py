"""`lockguard resolve`, pip side, against local indexes on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.lockfiles import requirements_lock
from lockguard.lockfiles.headers import is_sealed_intact, read_header
from tests.support.envs import ENV_PYTHON
from tests.support.wheels import build_wheel, sha256_of


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def lock_of(project: Path) -> requirements_lock.RequirementsLock:
    return requirements_lock.parse((project / "requirements.lock").read_text())


def versions(project: Path) -> dict[str, str]:
    return {name: e.version for name, e in lock_of(project).entries.items()}


def test_torch_2_1_cuda_12_1_with_stack_pins_hashes_and_via(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*", "numpy"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    pins = versions(project)
    assert pins["torch"] == "2.1.2"  # newest patch, from PyPI (its default build is cu121)
    assert pins["nvidia-nccl-cu12"] == "2.18.1" and pins["nvidia-cudnn-cu12"] == "8.9.2.26"
    assert pins["triton"] == "2.1.0"
    assert pins["numpy"] == "1.26.4"  # knowledge hazard: torch 2.1 was built against NumPy 1
    assert pins["mpmath"] == "1.3.0"  # the pre-release 1.4.0a0 is not chosen
    lock = lock_of(project)
    torch_file = next(world.wheels.glob("torch-2.1.2-*.whl"))
    assert lock.entries["torch"].hashes == (sha256_of(torch_file),)
    assert lock.entries["torch"].via == ("-r lockguard.toml",)
    assert set(lock.entries["filelock"].via) == {"torch", "triton"}
    assert lock.index_url == world.pypi.url and lock.extra_index_urls == ()
    text = (project / "requirements.lock").read_text()
    assert is_sealed_intact(text) and read_header(text).fields["platform"] == "linux-64"
    # metadata came from range requests: the 200 kB padded torch wheels were never downloaded
    whole = [p for m, p, rng in world.pypi.requests if p.endswith(".whl") and not rng]
    assert whole == []


def test_real_pip_accepts_the_lock(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, pip=["jinja2", "numpy"])
    assert resolve(lg, project).exit_code == 0
    proc = subprocess.run(
        [
            ENV_PYTHON,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--require-hashes",
            "--no-deps",
            "--ignore-installed",
            "--no-cache-dir",
            "--isolated",
            "-r",
            str(project / "requirements.lock"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # no torch: NumPy 2 is fine
    assert "Would install jinja2-1.0 markupsafe-2.1.5 numpy-2.0.0" in proc.stdout


def test_pip_sync_accepts_the_lock(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    pip_sync = Path(sys.executable).with_name("pip-sync")
    proc = subprocess.run(
        [str(pip_sync), "--dry-run", str(project / "requirements.lock")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Would install" in proc.stdout or "Everything up-to-date" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    assert "jinja2==1.0" in proc.stdout or "Everything up-to-date" in proc.stdout


def test_cu118_comes_from_the_pytorch_index_and_it_never_shadows_pypi(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="11.8", pip=["torch==2.1.2", "jinja2"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    pins = versions(project)
    assert pins["torch"] == "2.1.2+cu118"
    assert pins["markupsafe"] == "2.1.5"  # PyPI's, not the decoy 99.0 on the PyTorch index
    assert not any(n.startswith("nvidia-") for n in pins)
    lock = lock_of(project)
    assert lock.extra_index_urls == (world.variant_url("cu118"),)
    asked = [p for _m, p, _r in world.pytorch.requests if p.endswith("/")]
    assert all("/torch/" in p or "/triton/" in p for p in asked), asked


def test_first_index_strategy(tmp_path, world, local_index, lg):
    wheels = tmp_path / "w"
    world.pypi.add(build_wheel(wheels, "shared-name", "1.0"))
    local_index.add(build_wheel(wheels / "b", "shared-name", "2.0"))
    project = tmp_path / "p"
    world.intent(project, pip=["shared-name"])
    toml = project / "lockguard.toml"
    toml.write_text(
        toml.read_text().replace(
            f'indexes = ["{world.pypi.url}"]',
            f'indexes = ["{world.pypi.url}", "{local_index.url}"]',
        )
    )
    assert resolve(lg, project).exit_code == 0
    # found on the first index: never taken from the second
    assert versions(project)["shared-name"] == "1.0"


def test_metadata_paths_pep658_ranges_refused_and_html(tmp_path, world, lg):
    project = tmp_path / "p"
    world.pypi.faults.serve_metadata = True  # PEP 658, advertised
    world.intent(project, pip=["torch==2.1.2"])
    assert resolve(lg, project).exit_code == 0
    assert not any(p.endswith(".whl") for _m, p, _r in world.pypi.requests)  # no wheel was touched
    # served but not advertised: never asked for (as pip and uv do), the wheel is read by ranges
    world.pypi.faults.advertise_metadata = False
    world.pypi.faults.serve_json = False  # and PEP 503 HTML pages only
    world.pypi.reset_counters()
    fresh = tmp_path / "fresh"
    world.intent(fresh, cuda="none", pip=["hjson"])  # metadata not cached by the first resolve
    result = resolve(lg, fresh, "--refresh")
    assert result.exit_code == 0, result.stderr
    assert not any(p.endswith(".metadata") for _m, p, _r in world.pypi.requests)
    assert any(r for _m, p, r in world.pypi.requests if p.endswith(".whl"))
    world.pypi.faults.serve_metadata = False
    world.pypi.faults.refuse_ranges = True
    world.pypi.add(build_wheel(tmp_path / "w", "rangeless", "1.0"))
    world.intent(fresh, cuda="none", pip=["rangeless"])
    result = resolve(lg, fresh)
    assert result.exit_code == 0
    assert "refused HTTP range requests" in result.stderr


def test_sdist_metadata_pkg_info_pep517_and_overrides(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["static-sdist", "built-sdist"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    pins = versions(project)
    # ninja only from the PEP 517 metadata
    assert {"static-sdist", "built-sdist", "hjson", "ninja"} <= set(pins)
    needs_torch = tmp_path / "ds"
    world.intent(needs_torch, pip=["deepspeed==0.13.1"])
    result = resolve(lg, needs_torch)
    assert result.exit_code == 2
    assert "deepspeed-0.13.1.tar.gz" in result.stderr and "[[dependency-metadata]]" in result.stderr
    world.intent(
        needs_torch,
        pip=["deepspeed==0.13.1"],
        extra=(
            '\n[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
            'requires-dist = ["hjson", "ninja", "numpy", "torch"]\n'
        ),
    )
    world.pypi.reset_counters()
    result = resolve(lg, needs_torch)
    assert result.exit_code == 0, result.stderr
    pins = versions(needs_torch)
    assert pins["torch"] == "2.1.2" and pins["numpy"] == "1.26.4"
    assert not any("deepspeed-0.13.1.tar.gz" in p for _m, p, _r in world.pypi.requests)


def test_retries_500_timeout_and_truncated_body(tmp_path, world, lg, monkeypatch):
    monkeypatch.setenv("LOCKGUARD_HTTP_TIMEOUT", "1")
    world.pypi.faults.fail_once["/simple/jinja2/"] = 500
    world.pypi.faults.delay_once["/simple/markupsafe/"] = 2.5
    world.pypi.faults.truncate_once.add("/simple/numpy/")
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2", "numpy"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert versions(project)["markupsafe"] == "2.1.5"
    pages = [p for _m, p, _r in world.pypi.requests]
    assert pages.count("/simple/jinja2/") == 2 and pages.count("/simple/numpy/") == 2


def test_unreachable_index_is_exit_4_naming_it(tmp_path, world, lg, monkeypatch):
    monkeypatch.setenv("LOCKGUARD_HTTP_TIMEOUT", "1")
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    toml = project / "lockguard.toml"
    toml.write_text(toml.read_text().replace(world.pypi.url, "http://127.0.0.1:9/simple"))
    result = resolve(lg, project)
    assert result.exit_code == 4
    assert "127.0.0.1:9/simple/jinja2/" in result.stderr and "Traceback" not in result.output


def test_cache_offline_refresh_and_revalidation(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*"])
    assert resolve(lg, project).exit_code == 0
    first = (project / "requirements.lock").read_bytes()
    world.pypi.reset_counters()
    assert resolve(lg, project).exit_code == 0  # warm: pages within their TTL, metadata cached
    assert world.pypi.requests == []
    assert (project / "requirements.lock").read_bytes() == first  # byte-stable
    # pages revalidated (304), no metadata refetched
    assert resolve(lg, project, "--refresh").exit_code == 0
    assert world.pypi.requests and all(p.endswith("/") for _m, p, _r in world.pypi.requests)
    world.pypi.stop()
    result = resolve(lg, project, "--offline")
    assert result.exit_code == 0, result.stderr
    assert (project / "requirements.lock").read_bytes() == first
    other = tmp_path / "other"
    world.intent(other, cuda="none", pip=["hjson"])
    result = resolve(lg, other, "--offline")
    assert result.exit_code == 4 and "--offline" in result.stderr and "hjson" in result.stderr


def test_resolve_check_detects_an_out_of_date_lock_without_writing(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    assert resolve(lg, project, "--check").exit_code == 0
    before = (project / "requirements.lock").read_text()
    world.intent(project, cuda="none", pip=["jinja2", "hjson"])
    result = resolve(lg, project, "--check", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["data"]["stale"]
    assert (project / "requirements.lock").read_text() == before


def test_two_platforms_get_one_file_each(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(
        project, cuda="none", pip=["torch==2.1.0"], platforms=["linux-64", "linux-aarch64"]
    )
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    x86 = requirements_lock.parse((project / "requirements.linux-64.lock").read_text())
    arm = requirements_lock.parse((project / "requirements.linux-aarch64.lock").read_text())
    assert arm.entries["torch"].version == "2.1.0"
    assert x86.entries["torch"].version == "2.1.0+cpu"  # PyPI's x86_64 wheel is a CUDA build


def test_platform_subset_keeps_per_platform_names(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"], platforms=["linux-64", "linux-aarch64"])
    result = resolve(lg, project, "--platform", "linux-aarch64")
    assert result.exit_code == 0, result.stderr
    assert (project / "requirements.linux-aarch64.lock").exists()
    assert (
        not (project / "requirements.lock").exists()
        and not (project / "requirements.linux-64.lock").exists()
    )
    bad = resolve(lg, project, "--platform", "osx-arm64")
    assert bad.exit_code == 2 and "not in the intent's platforms" in bad.stderr


def test_concurrent_resolves_share_the_cache_safely(tmp_path, world):
    projects = []
    for i in range(3):
        project = tmp_path / f"p{i}"
        world.intent(project, pip=["torch==2.1.*", "numpy"])
        projects.append(project)
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(tmp_path / "shared-cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "lockguard", "resolve", "--intent", str(p / "lockguard.toml")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for p in projects
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    texts = {(p / "requirements.lock").read_text().replace(str(p), "") for p in projects}
    assert len(texts) == 1


def test_explain_prints_the_chain_and_the_knowledge_rules(tmp_path, world, lg, monkeypatch):
    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*", "xformers"], extra=(""))
    world.intent(project, pip=["jinja2", "torch==2.1.*", "numpy"])
    assert resolve(lg, project).exit_code == 0
    monkeypatch.chdir(project)
    result = lg("explain", "markupsafe")
    assert result.exit_code == 0, result.stderr
    assert (
        "markupsafe==2.1.5" in result.stdout
        and "jinja2" in result.stdout
        and "lockguard.toml" in result.stdout
    )
    numpy = lg("explain", "numpy")
    assert "torch-numpy1-abi" in numpy.stdout and "constraints/hazards.toml" in numpy.stdout
    nccl = lg("explain", "nvidia-nccl-cu12")
    assert "torch 2.1.2" in nccl.stdout and "constraints/torch.toml" in nccl.stdout
    missing = lg("explain", "not-locked")
    assert missing.exit_code == 2 and "not in" in missing.stderr


def test_explain_goes_through_the_package_that_pins_it(tmp_path, world, lg, monkeypatch):
    """Issue 31 §3: triton==3.2.0 was explained through megablocks (first by name among its
    parents, both direct) although torch 2.6.0 is what pins ==3.2.0; the chain goes through
    the parent whose knowledge rule pins the name, as here torch 2.1.2's triton==2.1.0 does."""
    world.pypi.add(build_wheel(tmp_path / "w", "aaa-kernels", "1.0", requires=["triton>=2.0"]))
    project = tmp_path / "p"
    world.intent(project, pip=["aaa-kernels", "torch==2.1.*"])
    assert resolve(lg, project).exit_code == 0
    assert lock_of(project).entries["triton"].via == ("aaa-kernels", "torch")
    monkeypatch.chdir(project)
    result = lg("explain", "triton", "--json")
    assert result.exit_code == 0, result.stderr
    chain = json.loads(result.stdout)["data"]["chain"]
    assert chain == ["triton==2.1.0", "torch==2.1.2", "lockguard.toml"], chain


@pytest.mark.network
def test_live_pypi_torch_2_1_0_transformers_deepspeed(tmp_path, lg):
    project = tmp_path / "live"
    project.mkdir()
    (project / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "12.1"\nchannels = []\n'
        'pip = ["torch==2.1.0", "transformers==4.36.2", "deepspeed==0.13.1"]\n'
        'exclude-newer = "2024-03-01T00:00:00Z"\n'
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        'requires-dist = ["hjson", "ninja", "numpy", "packaging>=20.0", "psutil", "py-cpuinfo", '
        '"pydantic", "pynvml", "torch", "tqdm"]\n'
    )
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    lock = lock_of(project)
    pins = {n: e.version for n, e in lock.entries.items()}
    assert pins["torch"] == "2.1.0" and pins["triton"] == "2.1.0"
    assert pins["nvidia-nccl-cu12"] == "2.18.1" and pins["nvidia-cudnn-cu12"] == "8.9.2.26"
    assert int(pins["numpy"].split(".")[0]) < 2
    assert all(e.hashes for e in lock.entries.values())
