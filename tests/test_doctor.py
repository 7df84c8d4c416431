"""`lockguard doctor`: the real probe in temporary venvs (no torch, a fake torch mapping real tiny
libraries, a torch that crashes), NVML facts faked through the adapter's interface, every check
triggered and not."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from lockguard.doctor.check import Facts
from lockguard.doctor.checks import decode_cudnn, run_checks
from lockguard.install.inventory import LockView
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.machine.nvml import detect_machine
from lockguard.io.machine.probe_runner import run_probe
from lockguard.model.probe import ProbeResult
from lockguard.model.system_facts import Compiler, Nvcc, SystemFacts, Toolkit
from lockguard.model.target import GpuInfo, GpuProcess, MachineFacts
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch
from tests.support.envs import compile_library, copy_venv, make_venv, site_packages
from tests.support.fake_torch import add_dist, install_fake_torch
from tests.support.native_libs import fake_nccl

K = load_knowledge()
TORCH_21 = {
    "state": "ok",
    "version": "2.1.2",
    "cuda": "12.1",
    "cudnn": 8902,
    "cuda_available": True,
    "device_count": 1,
    "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "devices": [{"name": "NVIDIA A100", "capability": [8, 0]}],
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("doctor-venvs") / "template")


@pytest.fixture
def venv(template, tmp_path) -> Path:
    return copy_venv(template, tmp_path / "env")


def machine(driver="535.104.05", cuda="12.2", archs=("sm_80",), processes=()) -> MachineFacts:
    gpus = tuple(
        GpuInfo(
            i,
            f"GPU {a}",
            GpuArch.parse(a),
            80 << 30,
            1 << 30,
            False,
            f"GPU-{i}",
            processes=tuple(GpuProcess(pid, 2 << 30) for pid in processes),
        )
        for i, a in enumerate(archs)
    )
    return MachineFacts(DriverVersion.parse(driver), CudaVersion.parse(cuda), gpus)


NO_DRIVER = MachineFacts(problem="no NVIDIA driver (NVML Shared Library Not Found)")


def probe(torch=None, **base) -> ProbeResult:
    facts = {"python": {"version": "3.11.7"}, "distributions": {}}
    facts.update(base)
    return ProbeResult(
        "/env/bin/python", facts, torch if torch is not None else {"state": "missing"}
    )


def system(nvcc=None, gcc="12.2.0", shm=8 << 30, toolkits=(), libraries=()) -> SystemFacts:
    nvccs = (
        (Nvcc("/usr/local/cuda/bin/nvcc", "/usr/local/cuda-x/bin/nvcc", f"{nvcc}.0", nvcc),)
        if nvcc
        else ()
    )
    return SystemFacts(
        toolkits=tuple(toolkits),
        nvcc=nvccs,
        libraries=tuple(libraries),
        gcc=Compiler("/usr/bin/g++", gcc) if gcc else None,
        dev_shm_bytes=shm,
    )


def checks_of(
    result: ProbeResult,
    facts: MachineFacts = NO_DRIVER,
    lock=None,
    sys_facts: SystemFacts | None = None,
    **kw,
):
    return run_checks(Facts(result, facts, sys_facts or system(), lock, K, **kw))


def status(checks, check_id, title=None) -> str:
    return next(
        c.status for c in checks if c.id == check_id and (title is None or c.title == title)
    )


# -- the real probe --------------------------------------------------------------------------------


def test_probe_without_torch(venv):
    result = run_probe(str(venv / "bin" / "python"))
    assert result.crashed is None and result.problems == []
    assert result.base["python"]["executable"].startswith(str(venv))
    assert result.torch == {"state": "missing"}
    assert "pip" in result.base["distributions"] and result.base["glibc"].startswith("glibc")


def test_probe_reads_a_fake_torch_and_the_libraries_it_maps(venv, tmp_path):
    site = site_packages(venv)
    cudart = compile_library(
        site / "nvidia" / "cuda_runtime" / "lib", "libcudart.so.12", "libcudart.so.12"
    )
    nccl = fake_nccl(tmp_path / "system-lib", 21805)
    if cudart is None:
        pytest.skip("no C compiler")
    install_fake_torch(site, {**TORCH_21, "libs": [str(cudart), str(nccl)]})
    result = run_probe(str(venv / "bin" / "python"))
    torch = result.torch
    assert (
        torch["state"] == "ok"
        and torch["version"] == "2.1.2"
        and torch["cuda"] == "12.1"
        and torch["cudnn"] == 8902
    )
    assert (
        torch["nccl"] == [2, 18, 1]
        and torch["arch_list"][-1] == "sm_90"
        and torch["cxx11_abi"] is False
    )
    assert str(cudart) in torch["mapped"] and str(nccl) in torch["mapped"]
    # ncclGetVersion of the library torch mapped
    assert torch["mapped_versions"][str(nccl)] == 21805
    checks = checks_of(result, machine())
    lg302 = next(c for c in checks if c.id == "LG302")
    assert lg302.status == "error" and str(nccl) in lg302.detail and "NCCL 2.18.5" in lg302.detail
    assert str(cudart) not in lg302.detail
    install_fake_torch(site, {**TORCH_21, "libs": [str(cudart)]})
    assert status(checks_of(run_probe(str(venv / "bin" / "python")), machine()), "LG302") == "ok"


@pytest.mark.parametrize("crash", ["segfault", "raise"])
def test_a_crashing_torch_import_is_a_finding(venv, crash, lg):
    install_fake_torch(site_packages(venv), {**TORCH_21, "crash": crash})
    result = run_probe(str(venv / "bin" / "python"))
    assert result.base  # the facts before `import torch` survive the crash
    checks = checks_of(result)
    lg311 = next(c for c in checks if c.id == "LG311" and c.status == "error")
    assert lg311.title == "import torch"
    assert (
        ("SIGSEGV" in lg311.detail and "loading libtorch_cuda.so" in lg311.detail)
        if crash == "segfault"
        else "OSError: libcudnn.so.8" in lg311.detail
    )
    cli = lg("doctor", "--python", str(venv / "bin" / "python"))
    assert cli.exit_code == 1 and "LG311" in cli.stdout and "Traceback" not in cli.stderr


def test_doctor_on_this_machine_reports_no_driver_cleanly(venv, lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--json")
    body = json.loads(result.stdout)
    assert result.exit_code == 0, body["data"]["checks"]
    driver = next(c for c in body["data"]["checks"] if c["code"] == "LG312")
    assert (
        driver["status"] == "skip"
        and "no NVIDIA driver" in driver["message"]
        or detect_machine().has_driver
    )
    text = lg("doctor", "--python", str(venv / "bin" / "python"))
    assert "skip   driver" in text.stdout and "0 errors" in text.stdout


# -- every check, triggered and not ----------------------------------------------------------------


def test_lg300_driver_too_old():
    assert status(checks_of(probe(TORCH_21), machine("470.82.01", "11.4")), "LG300") == "error"
    assert status(checks_of(probe(TORCH_21), machine("535.104.05")), "LG300") == "ok"


def test_lg301_gpu_arch_not_in_the_torch_build():
    checks = checks_of(probe(TORCH_21), machine("570.26", "12.8", archs=("sm_100",)))
    lg301 = next(c for c in checks if c.id == "LG301")
    assert lg301.status == "error" and "no kernel image" in lg301.detail
    assert status(checks_of(probe(TORCH_21), machine(archs=("sm_90",))), "LG301") == "ok"


def toolkit(version, via="/usr/local/cuda", path="/usr/local/cuda", source="version.json"):
    return Toolkit(via, path, f"/usr/local/cuda-{version}", version, source, f"{path}/bin/nvcc")


def test_lg303_the_toolkit_jit_builds_use_against_the_lock():
    old = system(toolkits=[toolkit("11.8.89")], nvcc=None)
    checks = checks_of(probe(TORCH_21), machine(), sys_facts=old)
    lg303 = next(c for c in checks if c.id == "LG303")
    assert (
        lg303.status == "warn"
        and "CUDA 11.8.89 from /usr/local/cuda -> /usr/local/cuda-11.8.89" in lg303.detail
    )
    assert "CUDA_HOME" in lg303.finding.hint
    assert (
        status(
            checks_of(probe(TORCH_21), machine(), sys_facts=system(toolkits=[toolkit("12.1.1")])),
            "LG303",
        )
        == "ok"
    )
    # the lock's CUDA is the reference even before torch is installed
    lock = LockView(pip={}, cuda="12.1")
    assert status(checks_of(probe(), lock=lock, sys_facts=old), "LG303") == "warn"
    # CUDA_HOME at the lock's toolkit wins over /usr/local/cuda
    fixed = system(
        toolkits=[toolkit("11.8.89"), toolkit("12.1.105", "CUDA_HOME", "/opt/conda/envs/x")]
    )
    lg303 = next(c for c in checks_of(probe(), lock=lock, sys_facts=fixed) if c.id == "LG303")
    assert lg303.status == "ok" and "not /usr/local/cuda -> /usr/local/cuda-11.8.89" in lg303.detail
    missing = system(toolkits=[Toolkit("CUDA_HOME", "/nowhere")])
    assert (
        next(c for c in checks_of(probe(), lock=lock, sys_facts=missing) if c.id == "LG303").detail
        == "CUDA_HOME=/nowhere does not exist"
    )


def test_lg304_lg305_nvcc_and_gcc():
    def run(nvcc, gcc, torch=TORCH_21, **dists):
        return checks_of(
            probe(torch, distributions=dists), machine(), sys_facts=system(nvcc=nvcc, gcc=gcc)
        )

    checks = run("11.8", "11.4.0", deepspeed="0.13.1")
    assert status(checks, "LG304") == "error" and status(checks, "LG305") == "ok"
    # without a package that builds CUDA code at run time, a major mismatch only matters for
    # extension builds
    assert status(run("11.8", "11.4.0"), "LG304") == "warn"
    checks = run("12.4", "13.2.0", deepspeed="0.13.1")
    # DeepSpeed accepts 12.4 with 12.1 (its list); torch warns on minors
    assert status(checks, "LG304") == "warn"
    assert status(checks, "LG305") == "ok"  # nvcc 12.4 takes gcc 13
    checks = run("12.1", "13.2.0")
    assert status(checks, "LG304") == "ok" and status(checks, "LG305") == "error"
    checks = run("13.0", "12", {**TORCH_21, "cuda": "13.2"}, deepspeed="0.19.8")
    assert status(checks, "LG304") == "error"  # CUDA 13 has no mismatch list: exact minor only


def test_lg306_mixed_cuda_families():
    mixed = {"nvidia-cublas-cu11": "11.10.3.66", "nvidia-cublas-cu12": "12.1.3.1"}
    assert status(checks_of(probe(TORCH_21, distributions=mixed), machine()), "LG306") == "error"
    assert (
        status(
            checks_of(probe(TORCH_21, distributions={"nvidia-cublas-cu12": "1"}), machine()),
            "LG306",
        )
        == "ok"
    )


def test_lg307_dev_shm():
    assert (
        status(checks_of(probe(TORCH_21), machine(), sys_facts=system(shm=64 << 20)), "LG307")
        == "warn"
    )
    assert (
        status(checks_of(probe(TORCH_21), machine(), sys_facts=system(shm=2 << 30)), "LG307")
        == "ok"
    )


def test_lg308_memory_held_by_a_dead_process():
    facts = machine(processes=(4242, 7))
    assert (
        status(checks_of(probe(TORCH_21), facts, alive={4242: False, 7: True}), "LG308") == "warn"
    )
    assert status(checks_of(probe(TORCH_21), facts, alive={4242: True, 7: True}), "LG308") == "ok"


def test_lg309_torch_sees_no_cuda_while_nvml_sees_gpus():
    assert (
        status(checks_of(probe({**TORCH_21, "cuda_available": False}), machine()), "LG309")
        == "error"
    )
    assert status(checks_of(probe({**TORCH_21, "cuda": None}), machine()), "LG309") == "error"
    assert status(checks_of(probe(TORCH_21), machine()), "LG309") == "ok"


def test_lg310_installed_versions_against_the_lock():
    lock = LockView(pip={"torch": "2.1.2", "numpy": "1.26.4"})
    good = probe(TORCH_21, distributions={"torch": "2.1.2", "numpy": "1.26.4"})
    bad = probe(TORCH_21, distributions={"torch": "2.1.2", "numpy": "2.0.0"})
    assert status(checks_of(good, machine(), lock), "LG310") == "ok"
    checks = checks_of(bad, machine(), lock)
    assert status(checks, "LG310") == "error" and "numpy 2.0.0 (lock 1.26.4)" in next(
        c.detail for c in checks if c.id == "LG310"
    )


def test_lg313_smoke_and_lg314_cudnn():
    good = probe(TORCH_21, distributions={"nvidia-cudnn-cu12": "8.9.2.26"})
    good.smoke = [{"index": 0, "ok": True, "seconds": 0.0012}]
    checks = checks_of(good, machine(), smoke_requested=True)
    assert status(checks, "LG313") == "ok" and status(checks, "LG314") == "ok"
    bad = probe({**TORCH_21, "cudnn": 90100}, distributions={"nvidia-cudnn-cu12": "8.9.2.26"})
    bad.smoke = [
        {"index": 0, "ok": False, "error": "RuntimeError: CUDA error: no kernel image is available"}
    ]
    checks = checks_of(bad, machine(), smoke_requested=True)
    assert status(checks, "LG313") == "error" and status(checks, "LG314") == "warn"


def test_decode_cudnn_8_and_9():
    assert (
        decode_cudnn(8902) == "8.9.2"
        and decode_cudnn(90100) == "9.1.0"
        and decode_cudnn(91002) == "9.10.2"
    )
    assert decode_cudnn(None) is None


def test_overrides_stand_in_for_nvml_in_the_cli(venv, lg, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "470.82.01")
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_100")
    install_fake_torch(site_packages(venv), dict(TORCH_21))
    add_dist(site_packages(venv), "nvidia-cublas-cu12", "12.1.3.1")
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--json")
    assert result.exit_code == 1
    checks = {c["code"]: c["status"] for c in json.loads(result.stdout)["data"]["checks"]}
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
    assert (
        body["facts"]["smoke"][0]["ok"] is True and body["facts"]["smoke"][0]["checksum"] == 1024.0
    )
    assert {c["code"]: c["status"] for c in body["checks"]}["LG313"] == "ok"
    install_fake_torch(
        site, {**TORCH_21, "smoke_error": "CUDA error: no kernel image is available for execution"}
    )
    failed = lg("doctor", "--python", str(venv / "bin" / "python"), "--smoke")
    assert failed.exit_code == 1 and "no kernel image" in failed.stdout


@pytest.mark.parametrize("executable", ["/srv/envs/train/bin/python", "/srv/my envs/bin/python"])
def test_fixes_name_the_clean_install_that_runs_as_typed(executable):
    """A bare `lockguard clean-install` is exit 2 (it needs --python or --prefix): every fix doctor
    prints names this environment's interpreter, quoted for a shell."""
    lock = LockView(pip={"numpy": "1.26.4"})
    mixed = {"numpy": "2.0.0", "nvidia-cublas-cu11": "11.10.3.66", "nvidia-cublas-cu12": "12.1.3.1"}
    result = probe(
        TORCH_21, distributions=mixed, python={"version": "3.11.7", "executable": executable}
    )
    fixes = [c.finding.hint or "" for c in checks_of(result, machine(), lock) if c.finding]
    wanted = f"`lockguard clean-install --python {shlex.quote(executable)}`"
    with_clean_install = [fix for fix in fixes if "clean-install" in fix]
    assert len(with_clean_install) >= 2  # LG306 and LG310
    assert all(wanted in fix for fix in with_clean_install), with_clean_install
