"""What the machine holds outside any Python environment: CUDA toolkits (/usr/local/cuda, CUDA_HOME,
CUDA_PATH), every nvcc on PATH, the CUDA / cuDNN / NCCL / cuBLAS libraries the dynamic loader can
reach, the host compiler and /dev/shm. io/machine/system_cuda.py gathers them without torch;
doctor/ judges them. Each fact says where it came from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# The library families doctor states, by the file name's stem: libnccl.so.2 -> "nccl".
LIBRARY_FAMILIES = ("cudart", "cublas", "cublasLt", "cudnn", "nccl")

# The pip wheel that ships each family (its SONAME major is the wheel's major: nvidia-nccl-cu12
# 2.18.1 ships libnccl.so.2, nvidia-cudnn-cu12 8.9.2.26 ships libcudnn.so.8).
WHEEL_OF_FAMILY = {
    "cudart": "nvidia-cuda-runtime-",
    "cublas": "nvidia-cublas-",
    "cublasLt": "nvidia-cublas-",
    "cudnn": "nvidia-cudnn-",
    "nccl": "nvidia-nccl-",
}

# How each family reports its own version (a C call), read by the probe's --versions mode.
VERSION_CALLS = {
    "nccl": "ncclGetVersion",
    "cudart": "cudaRuntimeGetVersion",
    "cudnn": "cudnnGetVersion",
    "cublasLt": "cublasLtGetVersion",
    "cublas": "cublasGetProperty",
}


def decode_library_version(family: str, code: object) -> str | None:
    """The integer a library reports, as a dotted version (None when it cannot be read).

    ncclGetVersion: 21805 -> 2.18.5 (NCCL >= 2.9: X*10000+Y*100+Z),
      2708 -> 2.7.8 (older: X*1000+Y*100+Z);
    cudaRuntimeGetVersion: 12010 -> 12.1; cudnnGetVersion: 8902 -> 8.9.2, 90100 -> 9.1.0;
    cublasLtGetVersion: 120103 -> 12.1.3; cublasGetProperty: [12, 1, 3] -> 12.1.3."""
    if isinstance(code, list) and code and all(isinstance(p, int) for p in code):
        return ".".join(str(p) for p in code)
    if not isinstance(code, int) or isinstance(code, bool) or code <= 0:
        return None
    if family == "cudart":
        return f"{code // 1000}.{code % 1000 // 10}"
    if family in ("nccl", "cudnn", "cublasLt") and code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    if family in ("nccl", "cudnn"):
        return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"
    return None


def version_prefix_equal(a: str, b: str) -> bool:
    """Equal on the precision both have: library 8.9.2 == wheel 8.9.2.26, 12.1 == 12.1.105."""
    left, right = a.split("."), b.split(".")
    width = min(len(left), len(right))
    return left[:width] == right[:width]


@dataclass(frozen=True, slots=True)
class Toolkit:
    """A CUDA toolkit folder named by /usr/local/cuda, CUDA_HOME or CUDA_PATH."""

    via: str  # "/usr/local/cuda" | "CUDA_HOME" | "CUDA_PATH"
    path: str
    target: str | None = None  # where the path leads (links resolved); None when it does not exist
    version: str | None = None  # "13.0.88"
    version_source: str | None = None  # "version.json" | "version.txt" | "nvcc --version"
    nvcc: str | None = None  # its bin/nvcc, when present


@dataclass(frozen=True, slots=True)
class Nvcc:
    """One nvcc on PATH, in PATH order (the first is what a build runs)."""

    path: str
    real: str
    version: str | None = None  # "13.0.88" from "V13.0.88"
    release: str | None = None  # "13.0" from "release 13.0"
    problem: str | None = None  # why there is no version


@dataclass(frozen=True, slots=True)
class SharedLibrary:
    """A CUDA-stack library the dynamic loader can find outside any environment."""

    family: str  # one of LIBRARY_FAMILIES
    path: str  # the file the loader opens (directory + the SONAME-named file when present)
    names: tuple[str, ...]  # every name in that directory that leads to the same file
    real: str
    via: str  # "LD_LIBRARY_PATH" | "/etc/ld.so.conf.d/x.conf" | "ldconfig cache"
    soname: str | None = None
    version: str | None = None
    version_source: str | None = None  # "ncclGetVersion" (the library's own call) | "file name"

    @property
    def lookup_name(self) -> str:
        """The name a program asks the loader for: the SONAME, else the file name."""
        return self.soname or self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Compiler:
    path: str
    version: str | None


@dataclass(frozen=True, slots=True)
class SystemFacts:
    toolkits: tuple[Toolkit, ...] = ()
    nvcc: tuple[Nvcc, ...] = ()
    libraries: tuple[SharedLibrary, ...] = ()  # in the loader's search order
    gcc: Compiler | None = None
    ninja: str | None = None
    dev_shm_bytes: int | None = None
    # what could not be read, with why ("ldconfig -p timed out after 10 s")
    problems: tuple[str, ...] = field(default=())

    def toolkit(self, via: str) -> Toolkit | None:
        return next((t for t in self.toolkits if t.via == via), None)

    def first_reachable(self, name: str) -> SharedLibrary | None:
        """What `dlopen(name)` finds first outside an RPATH: LD_LIBRARY_PATH, then the loader's
        cache."""
        return next((lib for lib in self.libraries if lib.lookup_name == name), None)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
