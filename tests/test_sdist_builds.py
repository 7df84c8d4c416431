"""Issue 31 §2: an sdist that must be built costs one build environment per set of build
requirements per run, the stack's torch is the one installed there, and each phase of the build is
said on stderr.

megablocks (PKG-INFO 2.2/2.4) and transformer-engine-torch (2.4) list Requires-Dist but mark it
`Dynamic: requires-dist` (lowercase, as setuptools writes it): PEP 643 says a wheel may list other
requirements, and transformer-engine-torch's does (transformer_engine_cu{12,13} after the build's
torch). uv reads those lists anyway (its Dynamic check is case-sensitive); lockguard builds them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lockguard.io.index.build_env import BuildEnvironments, build_preferences
from lockguard.lockfiles import requirements_lock
from tests.support.wheels import build_sdist, build_wheel

# In-tree backend: the metadata names what the build environment holds (build requirement
# `buildreq` must be importable) and, like transformer-engine-torch's setup.py, a core package
# named after the CUDA of the torch it was built against.
BACKEND = """\
import importlib.metadata
import os


def _pkg_info():
    fields = {}
    with open("PKG-INFO") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    return fields["Name"], fields["Version"]


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _pkg_info()
    requires = ["hjson"]
    if os.path.exists("needs_torch"):
        torch = importlib.metadata.version("torch")
        requires.append("te-core-cu11" if "+cu118" in torch else "te-core-cu12")
    else:
        import buildreq  # noqa: F401  (installed in the build environment)
    dist = name.replace("-", "_")
    info = os.path.join(metadata_directory, f"{dist}-{version}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n")
        f.write("".join(f"Requires-Dist: {r}\\n" for r in requires))
    return os.path.basename(info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("unused")
"""


def pyproject(requires: list[str]) -> str:
    return (
        f"[build-system]\nrequires = {json.dumps(requires)}\n"
        'build-backend = "backend"\nbackend-path = ["."]\n'
    )


def dynamic_sdist(folder: Path, name: str, requires: list[str], files=None) -> Path:
    """megablocks' shape: PKG-INFO 2.4 listing Requires-Dist that it marks Dynamic (lowercase)."""
    return build_sdist(
        folder,
        name,
        "1.0",
        requires=["wrong-if-read"],
        metadata_version="2.4",
        dynamic=("requires-dist",),
        pyproject=pyproject(requires),
        files={"backend.py": BACKEND, **(files or {})},
    )


def gets(index, filename: str) -> int:
    return sum(1 for m, path, _r in index.requests if m == "GET" and path.endswith(filename))


def pins(folder: Path) -> dict[str, str]:
    lock = requirements_lock.parse((folder / "requirements.lock").read_text())
    return {n: e.version for n, e in lock.entries.items()}


def test_two_sdists_with_the_same_build_requirements_share_one_environment(
    tmp_path, local_index, lg_process
):
    w = tmp_path / "w"
    local_index.add(build_wheel(w, "hjson", "3.1.0"))
    local_index.add(build_wheel(w, "buildreq", "1.0", tag="py3-none-any"))
    local_index.add(build_wheel(w, "wrong-if-read", "1.0"))
    for name in ("twin-a", "twin-b"):
        local_index.add(dynamic_sdist(w, name, ["buildreq"]))
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "lockguard.toml").write_text(
        f'python = "3.11"\ncuda = "12.1"\nchannels = []\nindexes = ["{local_index.url}"]\n'
        'pip = ["twin-a", "twin-b"]\n'
    )
    result = lg_process("resolve", cwd=folder)
    assert result.exit_code == 0, result.stderr
    assert set(pins(folder)) == {"twin-a", "twin-b", "hjson"}  # built: Dynamic is not read
    # the build requirement came from the intent's index, once for both sdists
    assert gets(local_index, "buildreq-1.0-py3-none-any.whl") == 1
    err = result.stderr
    assert err.count("creating a build environment with buildreq") == 1
    assert err.count("reusing the build environment with buildreq") == 1
    assert err.count("installing buildreq") == 1
    assert err.count("running prepare_metadata_for_build_wheel") == 2
    assert "built the metadata of twin_a-1.0.tar.gz in" in err
    assert "built the metadata of twin_b-1.0.tar.gz in" in err


@pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="the build environment runs lockguard's own Python, and the world's torch wheels are "
    "cp311 only",
)
def test_the_build_environment_installs_the_stacks_torch(tmp_path, world, lg_process):
    """transformer-engine-torch's shape: its requirements follow the build's torch. With CUDA
    11.8 the stack's torch is 2.1.2+cu118 from the PyTorch index: the build sees that torch,
    not PyPI's newest."""
    w = tmp_path / "w"
    world.pypi.add(dynamic_sdist(w, "te-torch", ["torch>=2.1"], files={"needs_torch": ""}))
    world.pypi.add(build_wheel(w, "te-core-cu11", "1.0"))
    world.pypi.add(build_wheel(w, "te-core-cu12", "1.0"))
    folder = tmp_path / "p"
    world.intent(folder, cuda="11.8", pip=["torch", "te-torch"])
    result = lg_process("resolve", cwd=folder)
    assert result.exit_code == 0, result.stderr
    locked = pins(folder)
    assert locked["torch"] == "2.1.2+cu118"
    assert "te-core-cu11" in locked and "te-core-cu12" not in locked, locked
    assert "torch 2.1.2+cu118: the stack's torch" in result.stderr


def test_a_torch_the_build_requirement_excludes_is_not_forced():
    builds = BuildEnvironments(["https://pypi.example/simple"])
    prefer = build_preferences(
        ["2.6.0+cu126", "2.5.1+cu124"],
        "https://download.example/whl/",
        has=lambda version, _index: version != "2.6.0+cu126",  # the index lacks 2.6.0+cu126
    )
    assert prefer.index_of("2.6.0+cu126") == "https://download.example/whl/cu126"
    assert prefer.index_of("2.6.0") is None
    constraints, indexes, notes = builds._preferred(["torch>=2.7.0,<2.7.1", "setuptools"], prefer)
    assert constraints == []  # megablocks 0.10.0 pins torch 2.7.0: pip picks it
    assert indexes == ["https://pypi.example/simple"]
    assert notes == ["no torch of the stack (2.6.0+cu126...) meets torch>=2.7.0,<2.7.1"]
    constraints, indexes, _ = builds._preferred(["torch>=2.1"], prefer)
    assert constraints == ["torch==2.5.1+cu124"]  # the first stack torch the index has
    assert indexes[-1] == "https://download.example/whl/cu124"


def test_a_failed_build_is_not_logged_as_built(tmp_path, local_index, lg_process):
    w = tmp_path / "w"
    local_index.add(build_wheel(w, "wrong-if-read", "1.0"))
    # its build requirement is on no index: installing it fails
    local_index.add(dynamic_sdist(w, "broken", ["not-on-the-index"]))
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "lockguard.toml").write_text(
        f'python = "3.11"\ncuda = "12.1"\nchannels = []\nindexes = ["{local_index.url}"]\n'
        'pip = ["broken"]\n'
    )
    result = lg_process("resolve", cwd=folder)
    assert result.exit_code == 2, result.stderr
    assert "the metadata build of broken-1.0.tar.gz failed after" in result.stderr
    assert "built the metadata of broken" not in result.stderr
    assert "installing not-on-the-index failed" in result.stderr
