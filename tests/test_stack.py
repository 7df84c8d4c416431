"""Stack queries: consistent CUDA stacks, or explanations naming the conflicting facts."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from lockguard.io.knowledge.files import load_knowledge
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.intent import CudaRequest
from lockguard.model.target import Target
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion
from lockguard.resolve.stack import PYPI, PYTORCH_INDEX, cuda_ceiling, query_stacks

K = load_knowledge()


def target(
    cuda: str, platform="linux-64", python="3.11", glibc="2.28", driver=None, gpus=()
) -> Target:
    request = (
        CudaRequest(cuda)
        if cuda in ("none", "auto")
        else CudaRequest("version", CudaVersion.parse(cuda))
    )
    return Target(
        platform,
        PythonVersion.parse(python),
        glibc,
        request,
        driver=DriverVersion.parse(driver) if driver else None,
        gpu_archs=tuple(GpuArch.parse(g) for g in gpus),
    )


def stacks(t: Target, spec: str):
    return query_stacks(K, t, SpecifierSet(spec))


def test_torch_2_1_cuda_12_1_comes_from_pypi_with_its_pins():
    found = stacks(target("12.1"), "==2.1.*")
    assert [s.torch for s in found] == ["2.1.2", "2.1.1", "2.1.0"]
    oldest = found[-1]
    assert oldest.source == PYPI and oldest.index_url is None and oldest.variant == "cu121"
    assert (oldest.nccl, oldest.cudnn, oldest.triton) == ("2.18.1", "8.9.2.26", "2.1.0")
    assert str(oldest.min_driver) == "525.60.13" and oldest.gcc_max == 12
    assert oldest.conda_specs == (
        "python=3.11",
        "cuda-version=12.1",
        "cuda-nvcc=12.1",
        "cuda-cudart-dev=12.1",
        "sysroot_linux-64=2.17",
        "gcc_linux-64=12",
        "gxx_linux-64=12",
    )
    assert oldest.cxx11_abi is False


def test_torch_2_1_cuda_11_8_comes_from_the_cu118_index():
    first = stacks(target("11.8"), "==2.1.*")[0]
    assert first.torch == "2.1.2+cu118" and first.source == PYTORCH_INDEX
    assert first.index_url == "https://download.pytorch.org/whl/cu118"
    assert "cudatoolkit=11.8" in first.conda_specs and "gcc_linux-64=11" in first.conda_specs


def test_torch_2_1_cuda_12_4_is_explained():
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("12.4"), "==2.1.*")
    assert "torch 2.1 was published for cu118 and cu121, not cu124" in info.value.message
    sources = {c.source for c in info.value.conflicts}
    assert "intent" in sources and any(s.startswith("constraints/torch.toml:") for s in sources)


def test_driver_floor_too_low_is_explained():
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("12.1", driver="470.82"), "==2.1.*")
    assert info.value.message == "CUDA 12.1 needs driver >= 525.60.13; the floor is 470.82"


def test_sm_100_with_torch_2_1_is_explained():
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("12.1", gpus=["sm_100"]), "==2.1.*")
    assert "sm_100 needs a torch built with CUDA >= 12.8 (torch >= 2.7)" in info.value.message


def test_sm_100_is_served_by_cu128_builds():
    found = stacks(target("12.8", gpus=["sm_100", "sm_90"]), ">=2.7,<2.8")
    assert found[0].torch == "2.7.1+cu128" and found[0].source == PYTORCH_INDEX
    assert found[0].sysroot_glibc == "2.28"  # torch >= 2.7 wheels are manylinux_2_28


def test_cpu_only():
    linux = stacks(target("none"), "==2.1.*")[0]
    assert linux.torch == "2.1.2+cpu" and linux.index_url == "https://download.pytorch.org/whl/cpu"
    assert linux.cuda is None and linux.conda_specs == (
        "python=3.11",
    )  # no nvcc: no sysroot, no compilers
    arm = stacks(target("none", platform="linux-aarch64"), "==2.1.*")[0]
    assert arm.torch == "2.1.2" and arm.source == PYPI  # PyPI's aarch64 wheel is the CPU build


def test_python_and_glibc_limits_are_explained():
    with pytest.raises(
        Unsatisfiable, match="torch 2.1 has wheels for Python 3.8 to 3.11, not 3.12"
    ):
        stacks(target("12.1", python="3.12"), "==2.1.*")
    with pytest.raises(Unsatisfiable, match="torch 2.7 wheels need glibc >= 2.28"):
        stacks(target("12.6", glibc="2.17"), "==2.7.*")


def test_unknown_toolkit_and_macos_cuda():
    with pytest.raises(Unsatisfiable, match="CUDA 12.7 is not a toolkit lockguard knows"):
        stacks(target("12.7"), "==2.5.*")
    with pytest.raises(Unsatisfiable, match="osx-arm64 has no CUDA"):
        stacks(target("12.1", platform="osx-arm64"), "")


def test_cuda_auto_picks_the_newest_variant_the_driver_runs():
    assert str(cuda_ceiling(K, DriverVersion.parse("535.104.05"))) == "12.2"
    found = stacks(target("auto", driver="535.104.05"), "==2.1.*")
    assert found[0].variant == "cu121" and found[0].source == PYPI
    old = stacks(target("auto", driver="520.61.05"), "==2.1.*")
    assert old[0].variant == "cu118"


def test_stack_without_torch():
    only = query_stacks(K, target("12.4"), None, wants_torch=False)[0]
    assert (
        only.torch is None
        and "cuda-version=12.4" in only.conda_specs
        and "gcc_linux-64=13" in only.conda_specs
    )
    cuda13 = query_stacks(K, target("13.0"), None, wants_torch=False)[0]
    assert cuda13.sysroot_glibc == "2.28"  # conda-forge CUDA 13 builds need glibc 2.28


def test_gpu_explanations_say_which_builds_dropped_the_arch_and_which_still_have_it():
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("12.8", gpus=["sm_61"]), "==2.8.*")
    message = info.value.message
    assert "torch 2.8's cu128 build dropped GPUs older than sm_70 (Maxwell and Pascal" in message
    assert 'the cu126 build of torch 2.8 still has sm_61 (cuda = "12.6")' in message
    assert "needs a torch built with CUDA >= 11.7" not in message  # the old, misleading fact
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("12.1", gpus=["sm_37"]), "==2.1.*")
    assert "torch 2.1's cu121 build dropped GPUs older than sm_50 (Kepler" in info.value.message
    assert 'the cu118 build of torch 2.1 still has sm_37 (cuda = "11.8")' in info.value.message
    # the advice holds
    assert stacks(target("12.6", gpus=["sm_61"]), "==2.8.*")[0].variant == "cu126"
    with pytest.raises(Unsatisfiable) as info:
        stacks(target("13.0", gpus=["sm_61"]), "==2.15.*")
    assert (
        "no build of torch 2.15 has sm_61; the newest torch that has it is 2.14 (cu126)"
        in info.value.message
    )


def test_aarch64_cuda_builds_of_the_pytorch_index():
    found = stacks(target("12.8", platform="linux-aarch64", gpus=["sm_90"]), "==2.7.*")
    assert (
        found[0].torch == "2.7.1+cu128"
        and found[0].index_url == "https://download.pytorch.org/whl/cu128"
    )
    assert stacks(target("12.9", platform="linux-aarch64"), "==2.8.*")[0].variant == "cu129"
    assert stacks(target("13.0", platform="linux-aarch64"), "==2.9.*")[0].torch == "2.9.1+cu130"
    with pytest.raises(Unsatisfiable, match="published for no CUDA variant on linux-aarch64"):
        stacks(target("12.4", platform="linux-aarch64"), "==2.6.*")  # before 2.7: CPU only
    with pytest.raises(Unsatisfiable, match="torch 2.7's cu128 build starts at sm_90"):
        # the sbsa builds' archs
        stacks(target("12.8", platform="linux-aarch64", gpus=["sm_80"]), "==2.7.*")
    rows = [r for r in K.releases if r.index_aarch64]
    assert [r.minor for r in rows][:3] == ["2.7", "2.8", "2.9"] and all(
        "aarch64" in r.source for r in rows
    )
