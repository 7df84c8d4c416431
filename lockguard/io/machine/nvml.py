"""The one adapter around nvidia-ml-py (pynvml): driver, CUDA ceiling, GPUs, processes.

`LOCKGUARD_CUDA_DRIVER` and `LOCKGUARD_GPU_ARCH` override what NVML says (or stand in for it on a
machine without a driver). A machine without an NVIDIA driver is a normal answer, not an error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

from lockguard.errors import InputError
from lockguard.model.target import GpuInfo, GpuProcess, MachineFacts
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch

ENV_DRIVER = "LOCKGUARD_CUDA_DRIVER"
ENV_GPU_ARCH = "LOCKGUARD_GPU_ARCH"


class NvmlSource(Protocol):
    """Where machine facts come from: the real NVML, or a test's fake."""

    def read(self) -> MachineFacts: ...


class PynvmlSource:
    def read(self) -> MachineFacts:
        try:
            # the NVML binding, only when the machine is asked (and it may be missing)
            import pynvml
        except ImportError:
            return MachineFacts(problem="nvidia-ml-py is not installed")
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            return MachineFacts(problem=f"no NVIDIA driver ({_nvml_error(exc)})")
        try:
            return self._read(pynvml)
        except pynvml.NVMLError as exc:
            return MachineFacts(problem=f"NVML failed: {_nvml_error(exc)}")
        finally:
            with contextlib.suppress(pynvml.NVMLError):
                pynvml.nvmlShutdown()

    def _read(self, pynvml) -> MachineFacts:
        driver = DriverVersion.parse(_text(pynvml.nvmlSystemGetDriverVersion()))
        try:
            cuda_max = CudaVersion.from_nvml(pynvml.nvmlSystemGetCudaDriverVersion_v2())
        except (pynvml.NVMLError, AttributeError):
            cuda_max = CudaVersion.from_nvml(pynvml.nvmlSystemGetCudaDriverVersion())
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            gpus.append(
                GpuInfo(
                    index=index,
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    arch=GpuArch.from_capability(major, minor),
                    memory_total=int(memory.total),
                    memory_used=int(memory.used),
                    mig=_mig_mode(pynvml, handle),
                    uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                    processes=_processes(pynvml, handle),
                )
            )
        return MachineFacts(driver=driver, cuda_max=cuda_max, gpus=tuple(gpus))


def _text(value) -> str:
    # nvidia-ml-py >= 11.515 returns str; older pynvml returned bytes
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_error(exc) -> str:
    try:
        return _text(exc)
    except Exception:  # some NVML errors fail to stringify without a loaded library
        return type(exc).__name__


def _mig_mode(pynvml, handle) -> bool | None:
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
    except pynvml.NVMLError:
        return None  # not supported on this GPU
    return bool(current)


def _processes(pynvml, handle) -> tuple[GpuProcess, ...]:
    getter = (
        getattr(pynvml, "nvmlDeviceGetComputeRunningProcesses_v3", None)
        or pynvml.nvmlDeviceGetComputeRunningProcesses
    )
    try:
        found = getter(handle)
    except pynvml.NVMLError:
        return ()
    out = []
    for proc in found:
        used = proc.usedGpuMemory if isinstance(proc.usedGpuMemory, int) else 0
        try:
            name = _text(pynvml.nvmlSystemGetProcessName(proc.pid))
        except pynvml.NVMLError:
            name = ""
        out.append(GpuProcess(pid=int(proc.pid), used_memory=int(used or 0), name=name))
    return tuple(out)


def detect_machine(
    source: NvmlSource | None = None, environ: Mapping[str, str] | None = None
) -> MachineFacts:
    """NVML facts with the environment overrides applied; overrides always win."""
    environ = os.environ if environ is None else environ
    facts = (source or PynvmlSource()).read()
    driver_text = environ.get(ENV_DRIVER, "").strip()
    arch_text = environ.get(ENV_GPU_ARCH, "").strip()
    if not driver_text and not arch_text:
        return facts
    overridden = []
    if driver_text:
        try:
            driver = DriverVersion.parse(driver_text)
        except ValueError:
            raise InputError(
                f"{ENV_DRIVER}={driver_text!r} is not a driver version",
                key=ENV_DRIVER,
                hint="e.g. LOCKGUARD_CUDA_DRIVER=535.104.05",
            ) from None
        facts = replace(facts, driver=driver, cuda_max=None, problem=None)
        overridden.append(ENV_DRIVER)
    if arch_text:
        gpus = []
        for index, item in enumerate(
            a for a in arch_text.replace(";", ",").split(",") if a.strip()
        ):
            try:
                arch = GpuArch.parse(item)
            except ValueError:
                raise InputError(
                    f"{ENV_GPU_ARCH}: {item!r} is not a GPU architecture",
                    key=ENV_GPU_ARCH,
                    hint="e.g. LOCKGUARD_GPU_ARCH=sm_80,sm_90",
                ) from None
            gpus.append(GpuInfo(index=index, name=f"{arch} ({ENV_GPU_ARCH})", arch=arch))
        facts = replace(facts, gpus=tuple(gpus))
        overridden.append(ENV_GPU_ARCH)
    return replace(facts, overridden=tuple(overridden))
