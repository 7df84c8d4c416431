"""Issue 23, items 1-3, against a local index: the CUDA 13 generation's wheels.

1. LG121 is a fact about files (constraints/shared_files.toml, read from RECORD): a -cu12 wheel that
   installs outside nvidia/ (nvidia-cutlass-dsl-libs-cu12) sits next to a CUDA 13 stack, two wheels
   that install the same path (nvidia-nccl-cu12 and -cu13) never share a lock.
2. CUDA 13's split nvcc: nvidia-cuda-nvcc needs nvidia-nvvm and nvidia-cuda-crt without a version;
   both are bound to the intent's release, and check sees a lock where they are not.
3. Every component NVIDIA's cuda-toolkit lists is bound (cccl, nvjpeg, ...), not only eleven.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lockguard.lockfiles import requirements_lock
from tests.support.locked import edit
from tests.support.wheels import build_wheel

LINUX = "py3-none-manylinux_2_28_x86_64"


def wheel(
    folder: Path, name: str, version: str, *, requires=(), files: dict[str, bytes] | None = None
) -> Path:
    return build_wheel(folder, name, version, tag=LINUX, requires=list(requires), files=files)


@pytest.fixture
def index(local_index, tmp_path):
    w = tmp_path / "wheels"
    add = local_index.add
    # a CUDA 13 stack: its toolkit wheels install into nvidia/cu13/, its NCCL into nvidia/nccl/
    for version in ("13.0.96", "13.5.37"):
        add(
            wheel(
                w,
                "nvidia-cuda-runtime",
                version,
                files={"nvidia/cu13/lib/libcudart.so.13": b"\x7fELF"},
            )
        )
    for version in ("13.0.88", "13.5.37"):
        add(
            wheel(
                w,
                "nvidia-cuda-nvcc",
                version,
                requires=["nvidia-nvvm", "nvidia-cuda-runtime", "nvidia-cuda-crt"],
                files={"nvidia/cu13/bin/nvcc": b"\x7fELF"},
            )
        )
        add(
            wheel(
                w, "nvidia-nvvm", version, files={"nvidia/cu13/nvvm/lib64/libnvvm.so.4": b"\x7fELF"}
            )
        )
        add(
            wheel(
                w,
                "nvidia-cuda-crt",
                version,
                files={"nvidia/cu13/include/crt/host_config.h": b"/* crt */"},
            )
        )
    add(
        wheel(
            w, "nvidia-nccl-cu13", "2.30.7", files={"nvidia/nccl/lib/libnccl.so.2": b"\x7fELF-13"}
        )
    )
    add(
        wheel(
            w, "nvidia-nccl-cu12", "2.27.5", files={"nvidia/nccl/lib/libnccl.so.2": b"\x7fELF-12"}
        )
    )
    # nvidia-cutlass-dsl 4.8 requires its cu12 libraries on every CUDA, and the cu13 ones for [cu13]
    for major in ("12", "13"):
        add(
            wheel(
                w,
                f"nvidia-cutlass-dsl-libs-cu{major}",
                "4.8.0",
                files={f"nvidia_cutlass_dsl/cu{major}/lib/libcute_dsl_runtime.so": b"\x7fELF"},
            )
        )
    add(
        build_wheel(
            w,
            "nvidia-cutlass-dsl",
            "4.8.0",
            requires=[
                "nvidia-cutlass-dsl-libs-cu12==4.8.0",
                'nvidia-cutlass-dsl-libs-cu13==4.8.0; extra == "cu13"',
            ],
        )
    )
    add(
        build_wheel(
            w,
            "torchlike",
            "1.0",
            requires=["nvidia-nccl-cu13==2.30.7", "nvidia-cuda-runtime==13.0.96"],
        )
    )
    add(build_wheel(w, "ncclcu12user", "1.0", requires=["nvidia-nccl-cu12"]))
    # components outside the eleven of old: CCCL (pulled by nvshmem) and nvJPEG (pulled by
    # nvimgcodec)
    for version in ("12.6.77", "12.9.27"):
        add(
            wheel(
                w,
                "nvidia-cuda-cccl-cu12",
                version,
                files={"nvidia/cuda_cccl/include/cub/cub.cuh": b"//"},
            )
        )
    for version in ("12.3.1.117", "12.4.0.76"):
        add(
            wheel(
                w,
                "nvidia-nvjpeg-cu12",
                version,
                files={"nvidia/nvjpeg/lib/libnvjpeg.so.12": b"\x7fELF"},
            )
        )
    add(build_wheel(w, "nvshmemlike", "3.4.5", requires=["nvidia-cuda-cccl-cu12"]))
    add(build_wheel(w, "imgcodeclike", "0.6.0", requires=["nvidia-nvjpeg-cu12"]))
    return local_index


def intent(folder: Path, index, *, cuda: str, pip: list[str], channels: str = "[]") -> Path:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lockguard.toml").write_text(
        f'python = "3.12"\ncuda = "{cuda}"\nchannels = {channels}\nindexes = ["{index.url}"]\n'
        f"pip = {json.dumps(pip)}\n"
    )
    return folder / "lockguard.toml"


def pins(folder: Path) -> dict[str, str]:
    lock = requirements_lock.parse((folder / "requirements.lock").read_text())
    return {n: e.version for n, e in lock.entries.items()}


# -- 1: LG121 from the files, never from the name --------------------------------------------------


def test_a_cu12_wheel_outside_nvidia_sits_next_to_a_cuda13_stack(tmp_path, index, lg):
    project = tmp_path / "cutlass"
    path = intent(project, index, cuda="13.0", pip=["nvidia-cutlass-dsl[cu13]==4.8.0", "torchlike"])
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 0, result.stderr
    found = pins(project)
    assert (
        found["nvidia-cutlass-dsl-libs-cu12"] == "4.8.0"
        and found["nvidia-cutlass-dsl-libs-cu13"] == "4.8.0"
    )
    assert found["nvidia-nccl-cu13"] == "2.30.7"
    checked = lg("check", "--intent", str(path), "--no-cache")
    assert checked.exit_code == 0, checked.output


def test_two_wheels_that_install_the_same_path_never_share_a_lock(tmp_path, index, lg):
    project = tmp_path / "nccl"
    path = intent(project, index, cuda="13.0", pip=["torchlike", "ncclcu12user"])
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 3, result.stderr
    assert (
        "LG121: nvidia-nccl-cu13 and nvidia-nccl-cu12 both install nvidia/nccl/lib/libnccl.so.2"
        in result.stderr
        or "LG121: nvidia-nccl-cu12 and nvidia-nccl-cu13 both install nvidia/nccl/lib/libnccl.so.2"
        in result.stderr
    )
    assert "constraints/shared_files.toml:" in result.stderr
    assert not (project / "requirements.lock").exists()
    # the -cu12 NCCL alone, with CUDA 13: no file of it is shared with anything in the lock
    alone = tmp_path / "alone"
    assert (
        lg(
            "resolve", "--intent", str(intent(alone, index, cuda="13.0", pip=["ncclcu12user"]))
        ).exit_code
        == 0
    )


def test_check_reports_a_lock_with_two_wheels_that_install_one_path(tmp_path, index, lg):
    project = tmp_path / "p"
    path = intent(project, index, cuda="13.0", pip=["torchlike"])
    assert lg("resolve", "--intent", str(path)).exit_code == 0
    edit(
        project / "requirements.lock",
        "nvidia-nccl-cu13==2.30.7",
        "nvidia-nccl-cu12==2.27.5 \\\n    --hash=sha256:" + "0" * 64 + "\nnvidia-nccl-cu13==2.30.7",
        reseal=True,
    )
    result = lg("check", "--intent", str(path), "--no-cache", "--format", "json")
    assert result.exit_code == 1
    assert "LG121" in result.stdout
    assert (
        "nvidia-nccl-cu12 2.27.5 and nvidia-nccl-cu13 2.30.7 both install "
        "nvidia/nccl/lib/libnccl.so.2"
    ) in result.stdout


# -- 2: CUDA 13's split nvcc -----------------------------------------------------------------------


def test_split_nvcc_gets_nvvm_and_crt_of_the_intents_release(tmp_path, index, lg):
    project = tmp_path / "nvcc"
    path = intent(project, index, cuda="13.0", pip=["nvidia-cuda-nvcc"])
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 0, result.stderr
    found = pins(project)
    assert found["nvidia-cuda-nvcc"] == "13.0.88"
    # not 13.5.37
    assert found["nvidia-nvvm"] == "13.0.88" and found["nvidia-cuda-crt"] == "13.0.88"
    # why not the newer nvcc: the rule that bounds it, with its row
    assert (
        "nvidia-cuda-nvcc 13.0.88, not newer: 1 newer version the intent allows passed over: "
        "13.5.37 (the "
        'intent\'s cuda = "13.0" needs nvidia-cuda-nvcc<13.1.80,>=13.0.48 [LG129: CUDA 13.0 ships'
    ) in result.stderr
    edit(project / "requirements.lock", "nvidia-nvvm==13.0.88", "nvidia-nvvm==13.5.37", reseal=True)
    checked = lg("check", "--intent", str(path), "--no-cache")
    assert checked.exit_code == 1
    assert (
        "LG129" in checked.output and "nvidia-nvvm 13.5.37 belongs to CUDA 13.5" in checked.output
    )
    newer = tmp_path / "newer"
    assert (
        lg(
            "resolve", "--intent", str(intent(newer, index, cuda="13.5", pip=["nvidia-cuda-nvcc"]))
        ).exit_code
        == 0
    )
    assert pins(newer)["nvidia-nvvm"] == "13.5.37" and pins(newer)["nvidia-cuda-crt"] == "13.5.37"


# -- 3: every component of NVIDIA's manifest -------------------------------------------------------


def test_components_outside_the_eleven_follow_the_intents_release(tmp_path, index, lg):
    cccl = tmp_path / "cccl"
    assert (
        lg(
            "resolve", "--intent", str(intent(cccl, index, cuda="12.6", pip=["nvshmemlike"]))
        ).exit_code
        == 0
    )
    assert pins(cccl)["nvidia-cuda-cccl-cu12"] == "12.6.77"  # not 12.9.27
    jpeg = tmp_path / "jpeg"
    assert (
        lg(
            "resolve", "--intent", str(intent(jpeg, index, cuda="12.4", pip=["imgcodeclike"]))
        ).exit_code
        == 0
    )
    # CUDA 12.4.1's, not 12.4.0.76 (CUDA 12.6+)
    assert pins(jpeg)["nvidia-nvjpeg-cu12"] == "12.3.1.117"
    edit(
        cccl / "requirements.lock",
        "nvidia-cuda-cccl-cu12==12.6.77",
        "nvidia-cuda-cccl-cu12==12.9.27",
        reseal=True,
    )
    checked = lg("check", "--intent", str(cccl / "lockguard.toml"), "--no-cache")
    assert (
        checked.exit_code == 1
        and "nvidia-cuda-cccl-cu12 12.9.27 belongs to CUDA 12.9" in checked.output
    )


def test_a_component_of_another_cuda_major_is_refused_by_its_release(tmp_path, index, lg):
    project = tmp_path / "p"
    path = intent(project, index, cuda="13.0", pip=["nvshmemlike"])
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 3, result.stderr
    assert (
        "LG129: nvidia-cuda-cccl-cu12 is a CUDA 12 wheel; CUDA 13.0 uses nvidia-cuda-cccl"
        in result.stderr
    )


# -- live PyPI (opt-in: -m network); download.pytorch.org may or may not be reachable --------------


def live(tmp_path: Path, name: str, body: str) -> Path:
    project = tmp_path / name
    project.mkdir()
    (project / "lockguard.toml").write_text("channels = []\n" + body)
    return project / "lockguard.toml"


@pytest.mark.network
@pytest.mark.parametrize(
    ("name", "body", "wanted"),
    [
        (
            "cutlass",
            'python = "3.12"\ncuda = "13.0"\npip = ["nvidia-cutlass-dsl[cu13]==4.8.0"]\n',
            {"nvidia-cutlass-dsl-libs-cu12": "4.8.0", "nvidia-cutlass-dsl-libs-cu13": "4.8.0"},
        ),
        (
            "vllm",
            'python = "3.12"\ncuda = "13.0"\npip = ["vllm==0.33.0"]\n',
            {"vllm": "0.33.0", "torch": "2.14.0"},
        ),
        (
            "sglang",
            'python = "3.12"\ncuda = "13.0"\nglibc = "2.34"\npip = ["sglang==0.5.23"]\n',
            {"sglang": "0.5.23"},
        ),
        ("nvcc", 'python = "3.12"\ncuda = "13.0"\npip = ["nvidia-cuda-nvcc"]\n', {}),
    ],
)
def test_live_cuda13_stacks_resolve(tmp_path, lg, name, body, wanted):
    path = live(tmp_path, name, body)
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 0, result.stderr
    found = pins(path.parent)
    assert {n: found.get(n) for n in wanted} == wanted
    for component in ("nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-nvcc"):
        if component in found:  # CUDA 13's split nvcc: of the intent's release
            assert found[component].startswith("13.0."), (component, found[component])
    assert lg("check", "--intent", str(path), "--no-cache").exit_code == 0


@pytest.mark.network
@pytest.mark.parametrize(
    ("name", "body", "fragment"),
    [
        (
            "tokenizers",
            (
                'python = "3.11"\ncuda = "12.1"\n'
                'pip = ["torch", "transformers==4.36.2", "tokenizers>=0.20"]\n'
            ),
            "transformers 4.36.2 needs tokenizers<0.19,>=0.14",
        ),
        (
            "cutoff",
            'python = "3.11"\ncuda = "12.1"\nexclude-newer = "2023-12-01T00:00:00Z"\n'
            'pip = ["torch", "transformers==4.36.0"]\n',
            "transformers 4.36.0 was uploaded on 2023-12-11, after exclude-newer 2023-12-01",
        ),
    ],
)
def test_live_conflicts_that_are_not_the_pytorch_index(tmp_path, lg, name, body, fragment):
    result = lg("resolve", "--intent", str(live(tmp_path, name, body)))
    assert result.exit_code == 3, result.stderr
    assert fragment in result.stderr


@pytest.mark.network
def test_live_unpinned_sglang_names_what_it_passed_over(tmp_path, lg):
    result = lg(
        "resolve",
        "--intent",
        str(live(tmp_path, "sglang", 'python = "3.12"\ncuda = "13.0"\npip = ["sglang"]\n')),
    )
    assert result.exit_code == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if "not newer:" in x)
    assert "its wheels need glibc 2.34 (manylinux_2_34), the target's is 2.28" in line


def test_a_version_a_release_lists_belongs_to_it_where_numbers_go_back():
    """nvJPEG: CUDA 12.1.1 pins 12.2.0.2, CUDA 12.2.0 pins 12.1.1.14 (cuda-toolkit METADATA)."""
    from lockguard.io.knowledge.files import load_knowledge
    from lockguard.model.versions import CudaVersion

    components = load_knowledge().components
    assert str(components.release_of("nvidia-nvjpeg-cu12", "12.2.0.2")) == "12.1"
    assert str(components.release_of("nvidia-nvjpeg-cu12", "12.1.1.14")) == "12.2"
    bound = components.bound(CudaVersion.parse("12.1"), "nvidia-nvjpeg-cu12")
    assert bound.allows("12.1.0.39") and bound.allows("12.2.0.2") and not bound.allows("12.1.1.14")
    assert components.bound(CudaVersion.parse("12.2"), "nvidia-nvjpeg-cu12").allows("12.1.1.14")
