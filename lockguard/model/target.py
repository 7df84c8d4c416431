"""The machine a lock is made for: always an explicit value, never the host by accident."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lockguard.errors import InputError
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion

if TYPE_CHECKING:  # annotations only: doctor reads MachineFacts without loading the intent model
    from lockguard.model.intent import CudaRequest, Intent

# conda subdir -> (platform_system, platform_machine, sys_platform, os_name)
_PLATFORMS = {
    "linux-64": ("Linux", "x86_64", "linux", "posix"),
    "linux-aarch64": ("Linux", "aarch64", "linux", "posix"),
    "linux-ppc64le": ("Linux", "ppc64le", "linux", "posix"),
    "osx-64": ("Darwin", "x86_64", "darwin", "posix"),
    "osx-arm64": ("Darwin", "arm64", "darwin", "posix"),
    "win-64": ("Windows", "AMD64", "win32", "nt"),
}


@dataclass(frozen=True, slots=True)
class Target:
    platform: str
    python: PythonVersion
    glibc: str | None
    cuda: CudaRequest
    driver: DriverVersion | None = None  # the oldest driver the lock must run on
    gpu_archs: tuple[GpuArch, ...] = ()
    cuda_max: CudaVersion | None = None  # for cuda = "auto": the newest CUDA the driver runs

    @property
    def system(self) -> str:
        return _PLATFORMS[self.platform][0]

    @property
    def machine(self) -> str:
        return _PLATFORMS[self.platform][1]

    @property
    def is_linux(self) -> bool:
        return self.system == "Linux"

    def marker_environment(self) -> dict[str, str]:
        """PEP 508 marker values of the target (not of the host lockguard runs on)."""
        system, machine, sys_platform, os_name = _PLATFORMS[self.platform]
        full = f"{self.python.major}.{self.python.minor}.0"
        return {
            "implementation_name": "cpython",
            "implementation_version": full,
            "os_name": os_name,
            "platform_machine": machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": system,
            "platform_version": "",
            "python_full_version": full,
            "python_version": str(self.python),
            "sys_platform": sys_platform,
        }


@dataclass(frozen=True, slots=True)
class MachineFacts:
    """What NVML (or an override) says about the local machine's NVIDIA driver and GPUs."""

    driver: DriverVersion | None = None
    cuda_max: CudaVersion | None = None
    gpus: tuple[GpuInfo, ...] = ()
    problem: str | None = None  # why there are no facts: "no NVIDIA driver", ...
    overridden: tuple[str, ...] = ()  # environment variables that replaced detection

    @property
    def has_driver(self) -> bool:
        return self.driver is not None


@dataclass(frozen=True, slots=True)
class GpuProcess:
    pid: int
    used_memory: int  # bytes; 0 when NVML cannot tell
    name: str = ""


@dataclass(frozen=True, slots=True)
class GpuInfo:
    index: int
    name: str
    arch: GpuArch
    memory_total: int = 0
    memory_used: int = 0
    mig: bool | None = None
    uuid: str = ""
    processes: tuple[GpuProcess, ...] = ()


def targets_for(intent: Intent, machine: MachineFacts | None = None) -> list[Target]:
    """One Target per platform of the intent. `machine` fills in "auto" values only."""
    driver = intent.driver
    gpus = intent.gpu
    cuda_max = None
    needs_machine = intent.cuda.mode == "auto" or intent.gpu_auto
    if needs_machine:
        if machine is None or not machine.has_driver:
            what = 'cuda = "auto"' if intent.cuda.mode == "auto" else 'gpu = "auto"'
            reason = (
                machine.problem if machine and machine.problem else "no NVIDIA driver was found"
            )
            raise InputError(
                f"{what} asks the local NVIDIA driver, but {reason}",
                file=str(intent.source.path) if intent.source else None,
                key="cuda" if intent.cuda.mode == "auto" else "gpu",
                hint='write the values, e.g. cuda = "12.1" and gpu = ["sm_80"], or set '
                "LOCKGUARD_CUDA_DRIVER and LOCKGUARD_GPU_ARCH",
            )
        if intent.cuda.mode == "auto":
            cuda_max = machine.cuda_max
            driver = driver or machine.driver
        if intent.gpu_auto:
            gpus = tuple(sorted({g.arch for g in machine.gpus}))
    return [
        Target(
            platform=platform,
            python=intent.python,
            glibc=intent.glibc if platform.startswith("linux") else None,
            cuda=intent.cuda,
            driver=driver,
            gpu_archs=gpus,
            cuda_max=cuda_max,
        )
        for platform in intent.platforms
    ]
