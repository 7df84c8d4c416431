"""Distinct version types for the CUDA stack.

A CUDA *driver* version (535.104.05) and a CUDA *toolkit* version (12.1) are different things:
comparing one with the other is always a bug, so they are different types that refuse to compare
across kinds. GPU architectures (sm_90, sm_90a, sm_100f) carry their compute capability.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering


def _parts(text: str, kind: str, pattern: re.Pattern[str]) -> tuple[int, ...]:
    text = text.strip()
    if not pattern.fullmatch(text):
        raise ValueError(f"{text!r} is not a valid {kind}")
    return tuple(int(p) for p in text.split("."))


@total_ordering
@dataclass(frozen=True, slots=True)
class DriverVersion:
    """An NVIDIA driver version such as 535.104.05 (major.minor[.patch])."""

    parts: tuple[int, ...]
    text: str

    _PATTERN = re.compile(r"\d{3}(\.\d+){0,2}", re.ASCII)

    @classmethod
    def parse(cls, text: str) -> DriverVersion:
        return cls(_parts(text, "driver version (e.g. 535.104.05)", cls._PATTERN), text.strip())

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, DriverVersion):
            return NotImplemented
        return self.parts < other.parts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DriverVersion):
            return NotImplemented
        return self.parts == other.parts

    def __hash__(self) -> int:
        return hash(("driver", self.parts))

    def __str__(self) -> str:
        return self.text


@total_ordering
@dataclass(frozen=True, slots=True)
class CudaVersion:
    """A CUDA toolkit version: 12.1, or 12.1.105 for a component release."""

    parts: tuple[int, ...]

    _PATTERN = re.compile(r"\d{1,2}\.\d{1,2}(\.\d+)?", re.ASCII)

    @classmethod
    def parse(cls, text: str) -> CudaVersion:
        return cls(_parts(text, "CUDA toolkit version (e.g. 12.1)", cls._PATTERN))

    @classmethod
    def from_variant(cls, variant: str) -> CudaVersion:
        """`cu121` -> 12.1, `cu118` -> 11.8, `cu130` -> 13.0."""
        match = re.fullmatch(r"cu(\d{2,3})", variant, re.ASCII)
        if not match:
            raise ValueError(f"{variant!r} is not a CUDA variant label like cu121")
        digits = match.group(1)
        return cls((int(digits[:-1]), int(digits[-1])))

    @classmethod
    def from_nvml(cls, value: int) -> CudaVersion:
        """NVML's integer encoding: 12080 -> 12.8."""
        return cls((value // 1000, (value % 1000) // 10))

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def minor(self) -> int:
        return self.parts[1]

    @property
    def major_minor(self) -> CudaVersion:
        return CudaVersion(self.parts[:2])

    @property
    def variant(self) -> str:
        """The PyTorch index label: 12.1 -> cu121."""
        return f"cu{self.major}{self.minor}"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, CudaVersion):
            return NotImplemented
        return self.parts < other.parts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CudaVersion):
            return NotImplemented
        return self.parts == other.parts

    def __hash__(self) -> int:
        return hash(("cuda", self.parts))

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)


@total_ordering
@dataclass(frozen=True, slots=True)
class GpuArch:
    """A GPU architecture as nvcc names it: sm_80, sm_90a, sm_100f; or compute_90 (PTX)."""

    major: int
    minor: int
    suffix: str = ""  # "a" (arch-specific) or "f" (family-specific): not forward compatible
    ptx: bool = False  # compute_XY: PTX that the driver JIT-compiles for newer GPUs

    _PATTERN = re.compile(r"(sm|compute)_(\d{2,3})([af]?)", re.ASCII)

    @classmethod
    def parse(cls, text: str) -> GpuArch:
        known = _ARCHS.get(text) if cls is GpuArch else None
        if known is not None:  # the knowledge names the same dozen archs hundreds of times
            return known
        match = cls._PATTERN.fullmatch(text.strip().lower())
        if not match:
            raise ValueError(f"{text!r} is not a GPU architecture like sm_80 or sm_90a")
        kind, digits, suffix = match.groups()
        arch = cls(int(digits[:-1]), int(digits[-1]), suffix, kind == "compute")
        if suffix and arch.major < _SUFFIX_FROM[suffix]:
            # arch-specific targets exist from compute capability 9.0, family-specific from 10.0
            # (CUDA C++ Programming Guide, "Feature Availability"): sm_80a names no GPU target
            raise ValueError(
                f"{text!r} is not a GPU architecture: '{suffix}' targets start at "
                f"sm_{_SUFFIX_FROM[suffix]}0{suffix}"
            )
        if cls is GpuArch and len(_ARCHS) < 4096:
            _ARCHS[text] = arch
        return arch

    @classmethod
    def from_capability(cls, major: int, minor: int) -> GpuArch:
        """A device's compute capability (9, 0) -> sm_90."""
        return cls(major, minor)

    @property
    def capability(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, GpuArch):
            return NotImplemented
        return (self.capability, self.suffix, self.ptx) < (
            other.capability,
            other.suffix,
            other.ptx,
        )

    def __str__(self) -> str:
        prefix = "compute" if self.ptx else "sm"
        return f"{prefix}_{self.major}{self.minor}{self.suffix}"


_ARCHS: dict[str, GpuArch] = {}  # parsed texts (values are immutable)
_SUFFIX_FROM = {
    "a": 9,
    "f": 10,
}  # the first major with arch-specific (a) and family-specific (f) targets


def build_runs_on(build_archs: tuple[GpuArch, ...], device: GpuArch) -> bool:
    """Can a binary built for `build_archs` run kernels on `device`?

    SASS (sm_XY) runs on devices of the same major with an equal or higher minor; PTX
    (compute_XY) is JIT-compiled for any device of an equal or higher capability. Arch- and
    family-specific targets (sm_90a, sm_100f) are not forward compatible beyond themselves.
    Follows torch.cuda._check_capability / _check_cubins.
    """
    for arch in build_archs:
        if arch.ptx and arch.capability <= device.capability:
            return True
        if arch.ptx:
            continue
        if arch.suffix == "a" and arch.capability != device.capability:
            continue
        if arch.major == device.major and arch.minor <= device.minor:
            return True
    return False


@total_ordering
@dataclass(frozen=True, slots=True)
class PythonVersion:
    """A Python major.minor, as the intent and the target name it."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> PythonVersion:
        match = re.fullmatch(r"(\d)\.(\d{1,2})", str(text).strip(), re.ASCII)
        if not match:
            raise ValueError(f"{text!r} is not a Python version like 3.11")
        return cls(int(match.group(1)), int(match.group(2)))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PythonVersion):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    @property
    def tag(self) -> str:
        """cp311 for 3.11."""
        return f"cp{self.major}{self.minor}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"
