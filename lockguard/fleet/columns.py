"""The drift table's columns, in the shape of the field report that started this: per group of
nodes, the driver, the GPUs, torch and its CUDA, /usr/local/cuda and nvcc, the CUDA runtime, cuDNN
and NCCL that torch loaded (or the loader reaches), /dev/shm, the lock and the findings.

Each column reads the doctor record's `drift` keys (README, "The doctor's JSON record"). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lockguard.model.json_types import JsonObject

GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    value: Callable[[JsonObject], str]


def _get(key: str) -> Callable[[JsonObject], str]:
    return lambda drift: _text(drift.get(key))


def _text(value: object) -> str:
    if value is None or value == []:
        return "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _torch(drift: JsonObject) -> str:
    state = drift.get("torch_state")
    if state == "missing":
        return "not installed"
    version = _text(drift.get("torch"))
    return version if state in (None, "ok") else f"{version} ({state})"


def _usr_local_cuda(drift: JsonObject) -> str:
    version, target = drift.get("usr_local_cuda_version"), drift.get("usr_local_cuda")
    if target is None:
        return "absent" if version is None else str(version)
    return f"{version or 'unknown'} ({target})"


def _jit(drift: JsonObject) -> str:
    version, home = drift.get("jit_cuda"), drift.get("cuda_home")
    if version is None and home is None:
        return "-"
    return f"{version or 'unknown'}" + (f" (CUDA_HOME {home})" if home else "")


def _library(family: str) -> Callable[[JsonObject], str]:
    def value(drift: JsonObject) -> str:
        path = drift.get(f"{family}_from")
        if path is None:
            return "-"
        version = drift.get(family) or "version unknown"
        origin, how = drift.get(f"{family}_origin") or "?", drift.get(f"{family}_how") or "?"
        return f"{version} {origin}, {how}"

    return value


def _shm(drift: JsonObject) -> str:
    size = drift.get("dev_shm_bytes")
    if not isinstance(size, int):
        return "absent"
    return f"{size / GIB:.1f} GiB" if size >= GIB else f"{size // MIB} MiB"


def _lock(drift: JsonObject) -> str:
    value = drift.get("lock_body_hash")
    return short_hash(value) if value else "no lock"


def short_hash(value: str | None) -> str:
    if not value:
        return "-"
    algorithm, _, digest = value.partition(":")
    return f"{algorithm}:{digest[:12]}" if digest else value[:19]


def _findings(drift: JsonObject) -> str:
    return ", ".join(drift.get("findings") or []) or "none"


COLUMNS: tuple[Column, ...] = (
    Column("driver", "driver", _get("driver")),
    Column("gpu_models", "GPUs", _get("gpu_models")),
    Column("gpu_archs", "GPU archs", _get("gpu_archs")),
    Column("python", "python", _get("python")),
    Column("interpreter", "interpreter", _get("interpreter")),
    Column("torch", "torch", _torch),
    Column("torch_cuda", "torch CUDA", _get("torch_cuda")),
    Column("usr_local_cuda", "/usr/local/cuda", _usr_local_cuda),
    Column(
        "nvcc",
        "nvcc",
        lambda d: _text(d.get("nvcc")) + (f" ({d['nvcc_path']})" if d.get("nvcc_path") else ""),
    ),
    Column("jit_cuda", "JIT CUDA", _jit),
    Column("cudart", "CUDA runtime", _library("cudart")),
    Column("cudnn", "cuDNN", _library("cudnn")),
    Column("nccl", "NCCL", _library("nccl")),
    Column("dev_shm", "/dev/shm", _shm),
    Column("lock", "lock", _lock),
    Column("findings", "findings", _findings),
)


# the drift keys a row shows besides those the doctor's fingerprint hashes (and the findings)
NOT_FINGERPRINTED = (
    "interpreter",
    "usr_local_cuda",
    "nvcc_path",
    "jit_cuda",
    "cuda_home",
    "cudart_from",
    "cudart_how",
    "cudnn_from",
    "cudnn_how",
    "nccl_from",
    "nccl_how",
    "dev_shm_bytes",
    "torch_state",
)


def row(drift: JsonObject, findings: list[str] | None = None) -> dict[str, str]:
    """Column key -> the text shown, for one node's drift columns; `findings` ("LG302 warning", the
    doctor's and `check --env`'s) stand in for the record's own list when given."""
    values = {column.key: column.value(drift) for column in COLUMNS}
    if findings is not None:
        values["findings"] = ", ".join(sorted(set(findings))) or "none"
    return values
