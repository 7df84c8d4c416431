"""Which package names belong to the CUDA stack, and which move with torch. Pure.

torch's family (torchvision, torchaudio, triton and the nvidia-* wheels torch pins) is only valid
together: an upgrade of one frees them all. Change reports list the CUDA stack first (the torch
family, the nvidia-* wheels, the conda side's cuda-version, cuDNN, NCCL, compilers and sysroot),
because that is where a relock breaks a GPU environment.
"""

from __future__ import annotations

# the names whose builds are published per torch release; triton is pinned by torch's own metadata
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "triton"})
# naming one of these in --upgrade-package frees the whole family
FAMILY_HEADS = frozenset({"torch", "torchvision", "torchaudio"})

_CONDA_STACK = frozenset(
    {"cuda-version", "cudatoolkit", "cudnn", "nccl", "pytorch-cuda", "cutensor"}
)
_CONDA_STACK_PREFIXES = (
    "cuda-",
    "libcu",
    "libnccl",
    "libcudnn",
    "libnv",
    "sysroot_",
    "gcc_",
    "gxx_",
)


def in_cuda_stack(name: str, side: str) -> bool:
    """Is `name` (canonical; `side` "pip" or "conda") part of the CUDA stack?"""
    if side == "pip":
        return name in TORCH_FAMILY or name.startswith("nvidia-") or name == "pytorch-triton"
    return name in _CONDA_STACK or name.startswith(_CONDA_STACK_PREFIXES)
