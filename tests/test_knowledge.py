"""The knowledge loader: the shipped files load, every row cites a source, bad rows are reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lockguard.errors import InputError
from lockguard.io.knowledge.files import default_dir, load_knowledge


@pytest.fixture
def constraints_copy(tmp_path) -> Path:
    target = tmp_path / "constraints"
    shutil.copytree(default_dir(), target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


def test_shipped_knowledge_covers_torch_2_0_to_newest_and_cuda_11_8_to_13():
    k = load_knowledge()
    minors = [r.minor for r in k.releases]
    assert minors[0] == "2.0" and "2.15" in minors
    assert k.torch_range == ("2.0.0", "2.15.0")
    cudas = {str(t.version) for t in k.toolkits}
    assert {"11.8", "12.1", "12.4", "12.8", "13.0", "13.2"} <= cudas
    for minor in minors:  # every minor has PyPI patch rows
        assert any(p.minor == minor for p in k.patches), minor
    for table in (
        k.releases,
        k.patches,
        k.archs,
        k.toolkits,
        k.cuda_specs,
        k.libraries,
        k.hazards,
        k.nvcc_rules,
        k.gpu_rules,
        k.torch_pins,
        k.sysroots,
    ):
        assert table, "every table has rows"
        for row in table:
            assert row.source.strip() and row.origin.startswith("constraints/")


def test_torch_2_1_pins_come_from_pypi_metadata():
    k = load_knowledge()
    patch = k.patch("2.1.0")
    pins = {r.name: str(r.specifier) for r in patch.requires}
    assert pins["nvidia-nccl-cu12"] == "==2.18.1"
    assert pins["nvidia-cudnn-cu12"] == "==8.9.2.26"
    assert pins["triton"] == "==2.1.0"


def _break(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "fragment"),
    [
        (
            "cuda.toml",
            'min-driver = "525.60.13"',
            'min-driver = "new"',
            "key 'min-driver': invalid value",
        ),
        (
            "torch.toml",
            'pypi-cuda = "12.1"',
            "pypi-cuda = 12.1",
            "key 'pypi-cuda': must be a string",
        ),
        (
            "hazards.toml",
            'source = "pytorch/pytorch#107302; pytorch/builder#1770"',
            'source = ""',
            "key 'source'",
        ),
        (
            "conda.toml",
            'conda = "nccl"',
            'conda = "nccl"\nsoruce = "x"',
            "key 'soruce': is not a key of this table",
        ),
        ("extensions.toml", 'min-arch = "sm_80"', 'min-arch = "ampere"', "key 'min-arch'"),
    ],
)
def test_malformed_row_names_file_line_and_key(constraints_copy, file, old, new, fragment):
    _break(constraints_copy / file, old, new)
    with pytest.raises(InputError) as info:
        load_knowledge(constraints_copy)
    error = info.value
    assert error.file.endswith(file)
    assert fragment in error.message
    assert error.line is not None
    # the line points into the broken row
    lines = (constraints_copy / file).read_text().splitlines()
    row_start = error.line
    assert any(
        new.split("\n")[-1].split(" =")[0] in line for line in lines[row_start - 1 : row_start + 12]
    )


def test_missing_source_key_is_an_error(constraints_copy):
    path = constraints_copy / "cuda.toml"
    text = path.read_text()
    first_source = text.index("source =")
    end = text.index("\n", first_source)
    path.write_text(text[:first_source] + text[end + 1 :])
    with pytest.raises(InputError) as info:
        load_knowledge(constraints_copy)
    assert "key 'source': is missing" in info.value.message


def test_cli_reports_broken_knowledge_with_exit_2(constraints_copy, monkeypatch, lg):
    _break(constraints_copy / "torch.toml", "\n[[arch]]\n", "\n[[archs]]\n")
    monkeypatch.setenv("LOCKGUARD_CONSTRAINTS", str(constraints_copy))
    result = lg("constraints", "show")
    assert result.exit_code == 2
    assert "unknown table [[archs]]" in result.stderr and "torch.toml:" in result.stderr


def test_cuda_components_table_maps_every_wheel_version_to_its_release():
    from lockguard.model.versions import CudaVersion

    c = load_knowledge().components
    assert {
        "cuda-runtime",
        "cuda-nvcc",
        "cuda-nvrtc",
        "cuda-cupti",
        "cublas",
        "cufft",
        "curand",
        "cusolver",
        "cusparse",
        "nvjitlink",
        "nvtx",
    } <= c.keys
    assert str(c.release_of("nvidia-cuda-nvcc-cu12", "12.9.86")) == "12.9"
    # an update cuda-toolkit does not list
    assert str(c.release_of("nvidia-cuda-nvcc-cu12", "12.5.82")) == "12.5"
    # library numbering: from the table
    assert str(c.release_of("nvidia-cusparse-cu12", "12.0.2.55")) == "12.1"
    # CUDA 13 wheels have no -cuXX suffix
    assert str(c.release_of("nvidia-cublas", "13.1.0.3")) == "13.0"
    assert c.release_of("nvidia-cudnn-cu12", "9.1.0.70") is None  # not a toolkit component
    cuda124 = CudaVersion.parse("12.4")
    nvcc = c.bound(cuda124, "nvidia-cuda-nvcc-cu12")
    assert nvcc.allows("12.4.131") and not nvcc.allows("12.5.82") and not nvcc.allows("12.3.107")
    assert nvcc.origin.startswith("constraints/components.toml:")
    jitlink = c.bound(CudaVersion.parse("12.1"), "nvidia-nvjitlink-cu12")
    assert (
        jitlink.allows("12.3.101")
        and not jitlink.allows("12.0.140")
        and not jitlink.allows("13.0.88")
    )
    assert not c.bound(cuda124, "nvidia-cublas-cu11").allows("11.11.3.6")  # another major's wheel


def test_torch_pins_belong_to_the_cuda_release_of_their_build():
    """Every nvidia component pin of a PyPI torch row is a version of that release's CUDA."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    k = load_knowledge()
    checked = 0
    for patch in k.patches:
        release = k.release(patch.minor)
        for text in patch.requires_text:
            req = Requirement(text)
            exact = [s.version for s in req.specifier if s.operator == "=="]
            bound = k.components.bound(release.pypi_cuda, canonicalize_name(req.name))
            if bound is None or not exact or release.pypi_cuda.major < 12:
                continue
            assert bound.allows(exact[0]), (
                f"torch {patch.version}: {req} is not CUDA {release.pypi_cuda}"
            )
            checked += 1
    assert checked > 150


def test_the_loader_names_the_schema_files_in_order():
    from lockguard.knowledge.loader import FILES
    from lockguard.knowledge.schema import SCHEMA

    assert tuple(SCHEMA) == FILES
