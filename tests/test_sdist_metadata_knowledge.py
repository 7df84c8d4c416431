"""constraints/sdist_metadata.toml: the dependencies of sdists whose metadata build needs torch
(causal-conv1d, flash-attn, mamba-ssm <= 2.2.2), known without a build.

- an sdist of a version a row covers is resolved from the row: never built, never downloaded, and
  `-v` names the row;
- a version no row covers is built as before (and its build may fail);
- the intent's own [[dependency-metadata]] for the version wins over the knowledge;
- a malformed row (LOCKGUARD_CONSTRAINTS) is exit 2 naming file:line and key;
- `constraints verify` reads the covered sdists' PKG-INFO (a range request) or, where PKG-INFO is
  silent, egg-info/requires.txt, and reports each difference.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lockguard.io.knowledge.files import default_dir, load_knowledge
from lockguard.lockfiles import requirements_lock
from tests.conftest import REFERENCE_METADATA
from tests.support.wheels import build_sdist, build_wheel
from tests.support.world import IN_TREE_PYPROJECT, NEEDS_TORCH_BACKEND

ROW_170 = ">=1.5.0.post5,<=1.7.0"  # the shipped row that covers causal-conv1d 1.7.0


def _causal_conv1d(folder: Path, version: str, **kwargs) -> Path:
    """An sdist shaped like causal-conv1d's: PKG-INFO 2.4 marking Requires-Dist Dynamic, and a
    backend that imports torch (not installed in the build environment: a build fails)."""
    return build_sdist(
        folder,
        "causal-conv1d",
        version,
        requires=["torch", "packaging", "ninja"],
        metadata_version="2.4",
        dynamic=("requires-dist",),
        requires_python=">=3.9",
        pyproject=IN_TREE_PYPROJECT,
        files={"backend.py": NEEDS_TORCH_BACKEND},
        **kwargs,
    )


@pytest.fixture
def kernels(world):
    """The world, with causal-conv1d 1.7.0 (covered by a row) and 1.8.0 (no row covers it)."""
    add = world.pypi.add
    add(_causal_conv1d(world.wheels, "1.7.0"))
    add(_causal_conv1d(world.wheels, "1.8.0"))
    add(build_wheel(world.wheels, "packaging", "24.0"))
    return world


def pins(folder: Path) -> dict[str, str]:
    lock = requirements_lock.parse((folder / "requirements.lock").read_text())
    return {n: e.version for n, e in lock.entries.items()}


def gets(index, filename: str) -> int:
    return sum(
        1 for method, path, _r in index.requests if method == "GET" and path.endswith(filename)
    )


def test_a_covered_sdist_is_resolved_from_the_knowledge_without_a_build(tmp_path, kernels, lg):
    project = tmp_path / "p"
    intent = kernels.intent(project, pip=["torch==2.1.0", "causal-conv1d==1.7.0"])
    result = lg("-v", "resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr  # its backend imports torch: a build would fail
    found = pins(project)
    assert found["causal-conv1d"] == "1.7.0"
    assert found["packaging"] == "24.0" and found["ninja"] == "1.11.1"  # the row's Requires-Dist
    origin = load_knowledge().sdist_metadata.row_for("causal-conv1d", "1.7.0").origin
    assert origin.startswith("constraints/sdist_metadata.toml:")
    assert f"metadata of causal-conv1d 1.7.0 from lockguard's knowledge ({origin})" in result.stderr
    assert gets(kernels.pypi, "causal_conv1d-1.7.0.tar.gz") == 0  # neither built nor downloaded
    assert "build" not in result.stderr


def test_a_version_no_row_covers_is_built(tmp_path, kernels, lg):
    project = tmp_path / "p"
    intent = kernels.intent(project, pip=["torch==2.1.0", "causal-conv1d==1.8.0"])
    result = lg("-v", "resolve", "--intent", str(intent))
    assert result.exit_code == 2
    assert "causal_conv1d-1.8.0.tar.gz" in result.stderr and "its build failed" in result.stderr
    assert "from lockguard's knowledge" not in result.stderr
    assert gets(kernels.pypi, "causal_conv1d-1.8.0.tar.gz") == 1


def test_a_release_the_table_lacks_with_static_metadata_is_read_not_built(tmp_path, kernels, lg):
    """Issue 31 §2: the table is a cache of facts, not the way speed is reached. A causal-conv1d
    release no row covers whose PKG-INFO (2.4) leaves Requires-Dist static (only Provides-Extra
    is Dynamic, grouped_gemm's shape) is decided from that PKG-INFO: no build environment, no
    build (its backend imports torch: a build would fail), as fast as a covered one."""
    kernels.pypi.add(
        build_sdist(
            kernels.wheels,
            "causal-conv1d",
            "1.9.0",
            requires=["torch", "packaging", "hjson"],
            metadata_version="2.4",
            dynamic=("provides-extra",),
            requires_python=">=3.9",
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    assert load_knowledge().sdist_metadata.row_for("causal-conv1d", "1.9.0") is None
    project = tmp_path / "p"
    intent = kernels.intent(project, pip=["torch==2.1.0", "causal-conv1d==1.9.0"])
    result = lg("-v", "resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    found = pins(project)
    assert found["causal-conv1d"] == "1.9.0" and found["hjson"] == "3.1.0"
    assert "from lockguard's knowledge" not in result.stderr
    assert "build environment" not in result.stderr and "built the metadata" not in result.stderr
    assert gets(kernels.pypi, "causal_conv1d-1.9.0.tar.gz") <= 1  # its PKG-INFO, read once


def test_the_intents_dependency_metadata_wins_over_the_knowledge(tmp_path, kernels, lg):
    project = tmp_path / "p"
    intent = kernels.intent(
        project,
        pip=["torch==2.1.0", "causal-conv1d==1.7.0"],
        extra=(
            '[[dependency-metadata]]\nname = "causal-conv1d"\nversion = "1.7.0"\n'
            'requires-dist = ["torch", "hjson"]\n'
        ),
    )
    result = lg("-v", "resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    found = pins(project)
    assert found["causal-conv1d"] == "1.7.0" and found["hjson"] == "3.1.0"
    assert "packaging" not in found and "ninja" not in found
    assert "from lockguard's knowledge" not in result.stderr
    assert gets(kernels.pypi, "causal_conv1d-1.7.0.tar.gz") == 0


def test_the_shipped_rows_name_each_version_once():
    """Rows of one project never overlap on a version they were read from (the first would win)."""
    table = load_knowledge().sdist_metadata
    assert {"causal-conv1d", "flash-attn", "mamba-ssm"} <= set(table.names)
    read = {
        "causal-conv1d": ["1.0.0", "1.1.3.post1", "1.2.0.post1", "1.4.0", "1.5.0.post5", "1.7.0"],
        "flash-attn": [
            "0.2.0",
            "1.0.3.post0",
            "1.0.5",
            "2.5.8",
            "2.5.9.post1",
            "2.6.3",
            "2.8.3",
            "2.8.3.post2",
        ],
        "mamba-ssm": ["1.0.1", "1.1.4", "1.2.0.post1", "2.2.2"],
    }
    for name, versions in read.items():
        for version in versions:
            covering = [r for r in table.rows if r.name == name and r.covers(version)]
            assert len(covering) == 1, (name, version, [r.origin for r in covering])
            assert covering[0].source.strip()
    # a later release is read before a row covers it
    assert table.row_for("causal-conv1d", "1.7.1") is None
    assert table.row_for("mamba-ssm", "2.3.1") is None  # static pyproject/PKG-INFO: read, not built
    assert table.row_for("flash-attn", "2.8.3").requires_dist == ("torch", "einops")


# -- a malformed row -------------------------------------------------------------------------------


@pytest.fixture
def constraints_copy(tmp_path) -> Path:
    target = tmp_path / "constraints"
    shutil.copytree(default_dir(), target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        (f'versions = "{ROW_170}"', 'versions = ">=1.5.0.post5"', "needs an upper bound"),
        (
            'requires-dist = ["torch", "einops"]',
            'requires-dist = ["torch>>2", "einops"]',
            "invalid value ['torch>>2'",
        ),
        ('name = "mamba-ssm"', 'name = "Mamba_SSM"', "not a canonical project name"),
        (
            'requires-python = ">=3.8"',
            'requires-python = "3.8+"',
            "key 'requires-python': invalid value",
        ),
    ],
)
def test_a_malformed_row_is_exit_2_naming_file_line_and_key(
    tmp_path, constraints_copy, monkeypatch, world, lg, old, new, fragment
):
    path = constraints_copy / "sdist_metadata.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    line = text[: text.index(old)].count("\n") + 1
    monkeypatch.setenv("LOCKGUARD_CONSTRAINTS", str(constraints_copy))
    intent = world.intent(tmp_path / "p", pip=["hjson"])
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 2
    assert f"sdist_metadata.toml:{line}: [[sdist-metadata]]" in result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "p" / "requirements.lock").exists()


# -- constraints verify ----------------------------------------------------------------------------


def _torch(local_index, folder: Path) -> None:
    """verify reads torch's rows too: one real torch wheel, so that part runs as it would."""
    metadata = (
        REFERENCE_METADATA / "torch-2.1.0-cp311-cp311-manylinux1_x86_64.METADATA"
    ).read_text()
    local_index.add(
        build_wheel(
            folder,
            "torch",
            "2.1.0",
            tag="cp311-cp311-manylinux1_x86_64",
            metadata=metadata.split("\n", 1)[1],
        )
    )


def test_verify_reports_sdists_whose_metadata_differs_from_a_row(tmp_path, local_index, lg):
    folder = tmp_path / "sdists"
    add = local_index.add
    _torch(local_index, folder)
    # ~250 kB packed
    noise = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(8000))
    # 1.7.0: PKG-INFO lists Requires-Dist without ninja (read from the first bytes of a big sdist)
    big = add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.7.0",
            requires=["torch", "packaging"],
            metadata_version="2.4",
            dynamic=("requires-dist",),
            requires_python=">=3.9",
            files={"zz/noise.txt": noise},
        )
    )
    # 1.6.0: the same as the row (names spelled otherwise)
    add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.6.0",
            requires=["Torch", "packaging", "Ninja"],
            metadata_version="2.4",
            dynamic=("requires-dist",),
            requires_python=">= 3.9",
        )
    )
    # 1.5.3.post1: old PKG-INFO without Requires-Dist; egg-info/requires.txt agrees with the row
    add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.5.3.post1",
            metadata_version="2.1",
            requires_python=">=3.9",
            files={"causal_conv1d.egg-info/requires.txt": "torch\npackaging\nninja\n"},
        )
    )
    # 1.5.0.post5: silent too, but older than 1.5.3.post1 in the same row: not downloaded
    add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.5.0.post5",
            metadata_version="2.1",
            requires_python=">=3.9",
            files={"causal_conv1d.egg-info/requires.txt": "torch\n"},
        )
    )
    # 1.4.0: requires.txt disagrees (an extra the row does not state)
    add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.4.0",
            metadata_version="2.1",
            requires_python=">=3.8",
            files={
                "causal_conv1d.egg-info/requires.txt": "torch\npackaging\nninja\n\n[dev]\npytest\n"
            },
        )
    )
    # 1.3.0.post1: Requires-Python differs
    add(
        build_sdist(
            folder,
            "causal-conv1d",
            "1.3.0.post1",
            metadata_version="2.1",
            requires_python=">=3.8",
            files={"causal_conv1d.egg-info/requires.txt": "torch\npackaging\nninja\n"},
        )
    )
    result = lg("constraints", "verify", "--index", local_index.url, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)["data"]
    diffs = {(d["version"], d["field"]): d for d in data["differences"]}
    table = load_knowledge().sdist_metadata
    changed = diffs[("causal-conv1d 1.7.0", "requires-dist (PKG-INFO)")]
    assert (
        changed["knowledge"] == "torch, packaging, ninja" and changed["live"] == "torch, packaging"
    )
    assert changed["origin"] == table.row_for("causal-conv1d", "1.7.0").origin
    assert not [
        k
        for k in diffs
        if k[0] in ("causal-conv1d 1.6.0", "causal-conv1d 1.5.3.post1", "causal-conv1d 1.5.0.post5")
    ]
    extra = diffs[("causal-conv1d 1.4.0", "requires-dist (egg-info/requires.txt)")]
    assert extra["live"] == 'torch, packaging, ninja, pytest; extra == "dev"'
    python = diffs[("causal-conv1d 1.3.0.post1", "requires-python (PKG-INFO)")]
    assert python["knowledge"] == ">=3.7" and python["live"] == ">=3.8"
    # rows that cover no sdist here: causal-conv1d's first two, and every flash-attn and mamba-ssm
    # row
    uncovered = {k[0] for k in diffs if k[1] == "sdists"}
    assert "causal-conv1d ==1.0.0" in uncovered and "flash-attn >=1.0.5,<=2.5.8" in uncovered
    assert len(uncovered) == len(table.rows) - 3
    assert data["sdists_read"] == 6
    # PKG-INFO came from the first bytes; only the silent ones' newest of a row came whole
    big_requests = [
        r for m, p, r in local_index.requests if p.endswith("causal_conv1d-1.7.0.tar.gz")
    ]
    assert big_requests and all(big_requests)
    assert big.stat().st_size > 200_000 > local_index.bytes_sent
    whole = {
        p.rsplit("/", 1)[-1] for m, p, r in local_index.requests if p.endswith(".tar.gz") and not r
    }
    assert whole == {
        "causal_conv1d-1.5.3.post1.tar.gz",
        "causal_conv1d-1.4.0.tar.gz",
        "causal_conv1d-1.3.0.post1.tar.gz",
    }


@pytest.mark.network
def test_live_mamba_ssm_with_causal_conv1d_and_flash_attn_resolve_without_a_build(tmp_path, lg):
    for name, pip in (
        ("mamba", ["mamba-ssm", "causal-conv1d"]),
        ("flash", ["flash-attn==2.8.3", "torch==2.6.*"]),
    ):
        project = tmp_path / name
        project.mkdir()
        (project / "lockguard.toml").write_text(
            f'python = "3.11"\ncuda = "12.4"\nchannels = []\npip = {json.dumps(pip)}\n'
        )
        result = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"))
        assert result.exit_code == 0, result.stderr
        found = pins(project)
        assert "from lockguard's knowledge (constraints/sdist_metadata.toml:" in result.stderr
        assert "building" not in result.stderr.lower()
        if name == "flash":
            assert (
                found["flash-attn"] == "2.8.3"
                and found["torch"].startswith("2.6.")
                and "einops" in found
            )
        else:
            assert "mamba-ssm" in found and "causal-conv1d" in found
