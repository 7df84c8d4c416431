"""One consistent CUDA stack for one platform: what the stack query (resolve/stack.py) chose, and
what the lock files and the change report say of it."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version

from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch


@dataclass(frozen=True, slots=True)
class CudaStack:
    """One consistent CUDA stack for one platform."""

    platform: str
    cuda: CudaVersion | None  # None: CPU only
    conda_specs: tuple[str, ...]
    sysroot_glibc: str | None
    gcc_max: int | None
    min_driver: DriverVersion | None
    torch: str | None = None  # "2.1.2" or "2.1.2+cu118"
    variant: str | None = None  # "cu121", "cpu"
    source: str | None = None  # PYPI or PYTORCH_INDEX
    index_url: str | None = None
    archs: tuple[GpuArch, ...] = ()
    pins: tuple[str, ...] = ()  # torch's CUDA-stack Requires-Dist that hold on the target
    cudnn: str | None = None
    nccl: str | None = None
    triton: str | None = None
    cxx11_abi: bool | None = None
    facts: tuple[str, ...] = field(default=(), compare=False)  # origins of the rows used

    @property
    def torch_public(self) -> str | None:
        return Version(self.torch).public if self.torch else None
