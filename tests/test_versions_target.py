"""Driver and toolkit versions are distinct types; the target is explicit; NVML detection."""

from __future__ import annotations

import types

import pytest

from lockguard.errors import InputError
from lockguard.io.machine.nvml import PynvmlSource, detect_machine
from lockguard.model.intent import CudaRequest, Intent
from lockguard.model.target import MachineFacts, Target, targets_for
from lockguard.model.versions import (
    CudaVersion,
    DriverVersion,
    GpuArch,
    PythonVersion,
    build_runs_on,
)


def test_driver_and_toolkit_versions_do_not_compare():
    driver, toolkit = DriverVersion.parse("535.104.05"), CudaVersion.parse("12.1")
    assert driver != toolkit
    with pytest.raises(TypeError):
        _ = driver < toolkit
    assert DriverVersion.parse("535.104.05") > DriverVersion.parse("535.86.10")
    assert CudaVersion.from_variant("cu118") == CudaVersion.parse("11.8")
    assert CudaVersion.from_nvml(12080) == CudaVersion.parse("12.8")
    with pytest.raises(ValueError):
        DriverVersion.parse("12.1")


def test_gpu_arch_compatibility_follows_torch_rules():
    build = tuple(GpuArch.parse(a) for a in ["sm_80", "sm_86", "sm_90"])
    assert build_runs_on(build, GpuArch.parse("sm_89"))  # same major, higher minor
    assert not build_runs_on(build, GpuArch.parse("sm_100"))
    assert not build_runs_on(build, GpuArch.parse("sm_75"))
    assert build_runs_on((GpuArch.parse("compute_90"),), GpuArch.parse("sm_120"))  # PTX JIT
    assert not build_runs_on((GpuArch.parse("sm_90a"),), GpuArch.parse("sm_91"))


def test_marker_environment_is_the_targets():
    t = Target("linux-aarch64", PythonVersion(3, 10), "2.28", CudaRequest("none"))
    env = t.marker_environment()
    assert env["platform_machine"] == "aarch64" and env["python_version"] == "3.10"
    assert env["sys_platform"] == "linux"


def test_auto_without_driver_is_a_clean_input_error():
    intent = Intent(python=PythonVersion(3, 11), cuda=CudaRequest("auto"))
    with pytest.raises(InputError) as info:
        targets_for(
            intent, MachineFacts(problem="no NVIDIA driver (NVML Shared Library Not Found)")
        )
    assert "no NVIDIA driver" in info.value.message and "LOCKGUARD_CUDA_DRIVER" in info.value.hint


def test_detection_on_this_machine_reports_no_driver_cleanly():
    facts = detect_machine(environ={})
    assert not facts.has_driver and facts.problem


def test_overrides_win_over_detection():
    facts = detect_machine(
        environ={"LOCKGUARD_CUDA_DRIVER": "550.54.14", "LOCKGUARD_GPU_ARCH": "sm_80, sm_90"}
    )
    assert str(facts.driver) == "550.54.14"
    assert [str(g.arch) for g in facts.gpus] == ["sm_80", "sm_90"]
    assert facts.overridden == ("LOCKGUARD_CUDA_DRIVER", "LOCKGUARD_GPU_ARCH")
    intent = Intent(python=PythonVersion(3, 11), cuda=CudaRequest("auto"), gpu_auto=True)
    (t,) = targets_for(intent, facts)
    assert str(t.driver) == "550.54.14" and [str(a) for a in t.gpu_archs] == ["sm_80", "sm_90"]
    with pytest.raises(InputError):
        detect_machine(environ={"LOCKGUARD_GPU_ARCH": "volta"})


def test_pynvml_adapter_reads_driver_gpus_and_processes(monkeypatch):
    """A stand-in pynvml module (this machine has no driver) exercises the adapter's calls."""

    class NVMLError(Exception):
        pass

    memory = types.SimpleNamespace(total=80 * 2**30, used=2 * 2**30)
    proc = types.SimpleNamespace(pid=4242, usedGpuMemory=2 * 2**30)
    fake = types.SimpleNamespace(
        NVMLError=NVMLError,
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlSystemGetDriverVersion=lambda: "535.104.05",
        nvmlSystemGetCudaDriverVersion_v2=lambda: 12020,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: f"h{i}",
        nvmlDeviceGetCudaComputeCapability=lambda h: (9, 0),
        nvmlDeviceGetMemoryInfo=lambda h: memory,
        nvmlDeviceGetName=lambda h: b"NVIDIA H100 80GB HBM3",
        nvmlDeviceGetUUID=lambda h: "GPU-1",
        nvmlDeviceGetMigMode=lambda h: (0, 0),
        nvmlDeviceGetComputeRunningProcesses_v3=lambda h: [proc],
        nvmlSystemGetProcessName=lambda pid: "python",
    )
    monkeypatch.setitem(__import__("sys").modules, "pynvml", fake)
    facts = PynvmlSource().read()
    assert str(facts.driver) == "535.104.05" and str(facts.cuda_max) == "12.2"
    (gpu,) = facts.gpus
    assert gpu.name == "NVIDIA H100 80GB HBM3" and str(gpu.arch) == "sm_90" and gpu.mig is False
    assert gpu.processes[0].pid == 4242

    def no_driver():
        raise NVMLError("Driver Not Loaded")

    fake.nvmlInit = no_driver
    assert "no NVIDIA driver" in PynvmlSource().read().problem
