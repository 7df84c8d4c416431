"""`lockguard doctor`: the real probe in temporary venvs (no torch, a fake torch mapping real tiny
libraries, a torch that crashes), NVML facts faked through the adapter's interface, every check
triggered and not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lockguard.doctor.checks import decode_cudnn, run_checks
from lockguard.install.inventory import LockView
from lockguard.io.machine.nvml import detect_machine
from lockguard.io.machine.probe_runner import run_probe
from lockguard.knowledge import load_knowledge
from lockguard.model.probe import ProbeResult
from lockguard.model.target import GpuInfo, GpuProcess, MachineFacts
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch
from tests.support.envs import compile_library, copy_venv, make_venv, site_packages
from tests.support.fake_torch import add_dist, install_fake_torch

K = load_knowledge()
TORCH_21 = {"version": "2.1.2", "cuda": "12.1", "cudnn": 8902, "cuda_available": True, "device_count": 1,
            "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
            "devices": [{"name": "NVIDIA A100", "capability": [8, 0]}]}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("doctor-venvs") / "template")


@pytest.fixture
def venv(template, tmp_path) -> Path:
    return copy_venv(template, tmp_path / "env")


def machine(driver="535.104.05", cuda="12.2", archs=("sm_80",), processes=()) -> MachineFacts:
    gpus = tuple(GpuInfo(i, f"GPU {a}", GpuArch.parse(a), 80 << 30, 1 << 30, False, f"GPU-{i}",
                         processes=tuple(GpuProcess(pid, 2 << 30) for pid in processes))
                 for i, a in enumerate(archs))
    return MachineFacts(DriverVersion.parse(driver), CudaVersion.parse(cuda), gpus)


def probe(torch=None, **base) -> ProbeResult:
    facts = {"python": {"version": "3.11.7"}, "distributions": {}, "tools": {}, "dev_shm_bytes": 8 << 30}
    facts.update(base)
    return ProbeResult("/env/bin/python", facts, torch)


def status(checks, check_id) -> str:
    return next(c.status for c in checks if c.id == check_id)


# -- the real probe --------------------------------------------------------------------------------

def test_probe_without_torch(venv):
    result = run_probe(str(venv / "bin" / "python"))
    assert result.crashed is None
    assert result.base["python"]["executable"].startswith(str(venv))
    assert result.torch == {"missing": True, "error": "No module named 'torch'"}
    assert "pip" in result.base["distributions"] and result.base["glibc"].startswith("glibc")


def test_probe_reads_a_fake_torch_and_the_libraries_it_maps(venv, tmp_path):
    site = site_packages(venv)
    cudart = compile_library(site / "nvidia" / "cuda_runtime" / "lib", "libcudart.so.12", "libcudart.so.12")
    nccl = compile_library(tmp_path / "system-lib", "libnccl.so.2", "libnccl.so.2")
    if cudart is None:
        pytest.skip("no C compiler")
    install_fake_torch(site, {**TORCH_21, "libs": [str(cudart), str(nccl)]})
    result = run_probe(str(venv / "bin" / "python"))
    torch = result.torch
    assert torch["version"] == "2.1.2" and torch["cuda"] == "12.1" and torch["cudnn"] == 8902
    assert torch["nccl"] == [2, 18, 1] and torch["arch_list"][-1] == "sm_90" and torch["cxx11_abi"] is False
    assert str(cudart) in torch["mapped"] and str(nccl) in torch["mapped"]
    checks = run_checks(result, machine(), None, K)
    lg302 = next(c for c in checks if c.id == "LG302")
    assert lg302.status == "error" and str(nccl) in lg302.detail and str(cudart) not in lg302.detail
    install_fake_torch(site, {**TORCH_21, "libs": [str(cudart)]})
    assert status(run_checks(run_probe(str(venv / "bin" / "python")), machine(), None, K), "LG302") == "ok"


@pytest.mark.parametrize("crash", ["segfault", "raise"])
def test_a_crashing_torch_import_is_a_finding(venv, crash, lg):
    install_fake_torch(site_packages(venv), {**TORCH_21, "crash": crash})
    result = run_probe(str(venv / "bin" / "python"))
    assert result.base  # the facts before `import torch` survive the crash
    checks = run_checks(result, MachineFacts(problem="no NVIDIA driver"), None, K)
    lg311 = next(c for c in checks if c.id == "LG311")
    assert lg311.status == "error"
    assert ("SIGSEGV" in lg311.detail and "loading libtorch_cuda.so" in lg311.detail) if crash == "segfault" \
        else "libcudnn.so.8" in lg311.detail
    cli = lg("doctor", "--python", str(venv / "bin" / "python"))
    assert cli.exit_code == 1 and "LG311" in cli.stdout and "Traceback" not in cli.stderr


def test_doctor_on_this_machine_reports_no_driver_cleanly(venv, lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--json")
    body = json.loads(result.stdout)
    assert result.exit_code == 0, body["data"]["checks"]
    driver = next(c for c in body["data"]["checks"] if c["id"] == "LG312")
    assert driver["status"] == "skip" and "no NVIDIA driver" in driver["detail"] or detect_machine().has_driver
    text = lg("doctor", "--python", str(venv / "bin" / "python"))
    assert "skip   driver" in text.stdout and "0 errors" in text.stdout


# -- every check, triggered and not -----------------------------------------------------------------

def test_lg300_driver_too_old():
    assert status(run_checks(probe(TORCH_21), machine("470.82.01", "11.4"), None, K), "LG300") == "error"
    assert status(run_checks(probe(TORCH_21), machine("535.104.05"), None, K), "LG300") == "ok"


def test_lg301_gpu_arch_not_in_the_torch_build():
    checks = run_checks(probe(TORCH_21), machine("570.26", "12.8", archs=("sm_100",)), None, K)
    lg301 = next(c for c in checks if c.id == "LG301")
    assert lg301.status == "error" and "no kernel image" in lg301.detail
    assert status(run_checks(probe(TORCH_21), machine(archs=("sm_90",)), None, K), "LG301") == "ok"


def test_lg303_usr_local_cuda():
    assert status(run_checks(probe(TORCH_21, usr_local_cuda="/usr/local/cuda-11.8"), machine(), None, K), "LG303") == "warn"
    assert status(run_checks(probe(TORCH_21, usr_local_cuda="/usr/local/cuda-12.1"), machine(), None, K), "LG303") == "ok"


def test_lg304_lg305_nvcc_and_gcc():
    def tools(nvcc, gcc, **dists):
        return probe(TORCH_21, tools={"nvcc": nvcc, "gcc": gcc, "nvcc_path": "/usr/local/cuda/bin/nvcc"},
                     distributions=dists)
    checks = run_checks(tools("11.8", "11.4.0"), machine(), None, K)
    assert status(checks, "LG304") == "error" and status(checks, "LG305") == "ok"
    checks = run_checks(tools("12.4", "13.2.0", deepspeed="0.13.1"), machine(), None, K)
    assert status(checks, "LG304") == "warn"  # DeepSpeed accepts 12.4 with 12.1 (its list); torch warns on minors
    assert status(checks, "LG305") == "ok"  # nvcc 12.4 takes gcc 13
    checks = run_checks(tools("12.1", "13.2.0"), machine(), None, K)
    assert status(checks, "LG304") == "ok" and status(checks, "LG305") == "error"
    torch_13 = {**TORCH_21, "cuda": "13.2"}
    checks = run_checks(probe(torch_13, tools={"nvcc": "13.0", "gcc": "12"}, distributions={"deepspeed": "0.19.8"}),
                        machine("595.45.04", "13.2"), None, K)
    assert status(checks, "LG304") == "error"  # CUDA 13 has no mismatch list: exact minor only


def test_lg306_mixed_cuda_families():
    mixed = {"nvidia-cublas-cu11": "11.10.3.66", "nvidia-cublas-cu12": "12.1.3.1"}
    assert status(run_checks(probe(TORCH_21, distributions=mixed), machine(), None, K), "LG306") == "error"
    assert status(run_checks(probe(TORCH_21, distributions={"nvidia-cublas-cu12": "1"}), machine(), None, K), "LG306") == "ok"


def test_lg307_dev_shm():
    assert status(run_checks(probe(TORCH_21, dev_shm_bytes=64 << 20), machine(), None, K), "LG307") == "warn"
    assert status(run_checks(probe(TORCH_21, dev_shm_bytes=2 << 30), machine(), None, K), "LG307") == "ok"


def test_lg308_memory_held_by_a_dead_process():
    facts = machine(processes=(4242, 7))
    assert status(run_checks(probe(TORCH_21), facts, None, K, alive={4242: False, 7: True}), "LG308") == "warn"
    assert status(run_checks(probe(TORCH_21), facts, None, K, alive={4242: True, 7: True}), "LG308") == "ok"


def test_lg309_torch_sees_no_cuda_while_nvml_sees_gpus():
    assert status(run_checks(probe({**TORCH_21, "cuda_available": False}), machine(), None, K), "LG309") == "error"
    assert status(run_checks(probe({**TORCH_21, "cuda": None}), machine(), None, K), "LG309") == "error"
    assert status(run_checks(probe(TORCH_21), machine(), None, K), "LG309") == "ok"


def test_lg310_installed_versions_against_the_lock():
    lock = LockView(pip={"torch": "2.1.2", "numpy": "1.26.4"})
    ok = probe(TORCH_21, distributions={"torch": "2.1.2", "numpy": "1.26.4"})
    bad = probe(TORCH_21, distributions={"torch": "2.1.2", "numpy": "2.0.0"})
    assert status(run_checks(ok, machine(), lock, K), "LG310") == "ok"
    checks = run_checks(bad, machine(), lock, K)
    assert status(checks, "LG310") == "error" and "numpy 2.0.0 (lock 1.26.4)" in next(c.detail for c in checks if c.id == "LG310")


def test_lg313_smoke_and_lg314_cudnn():
    good = probe(TORCH_21, distributions={"nvidia-cudnn-cu12": "8.9.2.26"})
    good.smoke = [{"index": 0, "ok": True, "seconds": 0.0012}]
    checks = run_checks(good, machine(), None, K)
    assert status(checks, "LG313") == "ok" and status(checks, "LG314") == "ok"
    bad = probe({**TORCH_21, "cudnn": 90100}, distributions={"nvidia-cudnn-cu12": "8.9.2.26"})
    bad.smoke = [{"index": 0, "ok": False, "error": "RuntimeError: CUDA error: no kernel image is available"}]
    checks = run_checks(bad, machine(), None, K)
    assert status(checks, "LG313") == "error" and status(checks, "LG314") == "warn"


def test_decode_cudnn_8_and_9():
    assert decode_cudnn(8902) == "8.9.2" and decode_cudnn(90100) == "9.1.0" and decode_cudnn(91002) == "9.10.2"
    assert decode_cudnn(None) is None


def test_overrides_stand_in_for_nvml_in_the_cli(venv, lg, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "470.82.01")
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_100")
    install_fake_torch(site_packages(venv), dict(TORCH_21))
    add_dist(site_packages(venv), "nvidia-cublas-cu12", "12.1.3.1")
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--json")
    assert result.exit_code == 1
    checks = {c["id"]: c["status"] for c in json.loads(result.stdout)["data"]["checks"]}
    assert checks["LG300"] == "error" and checks["LG301"] == "error"
    assert os.environ["LOCKGUARD_GPU_ARCH"] == "sm_100"


def test_smoke_runs_a_matmul_per_visible_device(venv, lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "535.104.05")
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_80")
    site = site_packages(venv)
    install_fake_torch(site, dict(TORCH_21))
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--smoke", "--json")
    body = json.loads(result.stdout)["data"]
    assert body["probe"]["smoke"][0]["ok"] is True and body["probe"]["smoke"][0]["checksum"] == 1024.0
    assert {c["id"]: c["status"] for c in body["checks"]}["LG313"] == "ok"
    install_fake_torch(site, {**TORCH_21, "smoke_error": "CUDA error: no kernel image is available for execution"})
    failed = lg("doctor", "--python", str(venv / "bin" / "python"), "--smoke")
    assert failed.exit_code == 1 and "no kernel image" in failed.stdout
