"""A small package world shaped like the real one: torch 2.1 with its nvidia-*-cu12 pins and
triton, a +cu118 build on a separate "PyTorch index", numpy 1 and 2, deepspeed as an sdist, and a
few plain packages. Every wheel is real (zip, METADATA, RECORD); METADATA of torch is PyPI's own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.index_server import LocalIndex
from tests.support.wheels import build_sdist, build_wheel

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
LINUX = "manylinux1_x86_64"
CP311 = f"cp311-cp311-{LINUX}"
TORCH_PLAIN = ["filelock", "typing-extensions", "sympy", "networkx", "jinja2", "fsspec"]


def pypi_metadata(stem: str, version: str | None = None) -> str:
    text = (DATA / f"{stem}.METADATA").read_text().split("\n", 1)[1]
    if version:
        text = text.replace("Version: 2.1.0\n", f"Version: {version}\n", 1)
    return text


@dataclass
class World:
    pypi: LocalIndex
    pytorch: LocalIndex  # like download.pytorch.org/whl: <url>/cu118/, <url>/cpu/
    wheels: Path

    def variant_url(self, variant: str) -> str:
        return f"{self.pytorch.url}/{variant}"

    def intent(
        self,
        path: Path,
        *,
        cuda: str = "12.1",
        pip: list[str],
        python: str = "3.11",
        platforms: list[str] | None = None,
        extra: str = "",
        channels: list[str] | None = None,
    ) -> Path:
        import json

        lines = [
            f'python = "{python}"',
            f'cuda = "{cuda}"',
            f"channels = {json.dumps(channels if channels is not None else [])}",
            f"platforms = {json.dumps(platforms or ['linux-64'])}",
            f'indexes = ["{self.pypi.url}"]',
            f'pytorch-index = "{self.pytorch.url}"',
            f"pip = {json.dumps(pip)}",
        ]
        path.mkdir(parents=True, exist_ok=True)
        target = path / "lockguard.toml"
        target.write_text("\n".join(lines) + "\n" + extra)
        return target

    def locked(self, path: Path, **intent_fields) -> Path:
        """`path` with an intent (the fields of `intent`) resolved against this world,
        in-process."""
        from lockguard.cli.boundary import run

        target = self.intent(path, **intent_fields)
        assert run(["resolve", "--intent", str(target)]) == 0
        return path


def nvidia_pins(metadata: str) -> list[tuple[str, str]]:
    import re

    return re.findall(r"Requires-Dist: (nvidia-[a-z0-9-]+) ?\(?==([0-9.]+)", metadata)


@contextmanager
def running_world(root: Path) -> Iterator[World]:
    """The world served by its two local indexes (a PyPI and a PyTorch index with /cu118) while
    the block runs."""
    pypi = LocalIndex(root / "pypi").start()
    pytorch = LocalIndex(root / "pytorch", mount="/whl", variants=True).start()
    try:
        yield build_world(root, pypi, pytorch)
    finally:
        pypi.stop()
        pytorch.stop()


def locked_mixed_project(world: World, project: Path) -> Path:
    """jinja2 and numpy with a conda side pinned from knowledge, resolved in-process against the
    world (the bad-input and fuzz tests damage copies of it)."""
    return world.locked(
        project,
        pip=["jinja2", "numpy"],
        channels=["conda-forge"],
        extra="conda-from-knowledge = true\n",
    )


def build_world(root: Path, pypi: LocalIndex, pytorch: LocalIndex) -> World:
    wheels = root / "wheels"
    add = pypi.add
    torch_210 = pypi_metadata("torch-2.1.0-cp311-cp311-manylinux1_x86_64")
    for version in ("2.1.0", "2.1.2"):
        add(
            build_wheel(
                wheels,
                "torch",
                version,
                tag=CP311,
                metadata=pypi_metadata("torch-2.1.0-cp311-cp311-manylinux1_x86_64", version),
                padding=200_000,
            )
        )
    add(
        build_wheel(
            wheels,
            "torch",
            "2.1.0",
            tag="cp311-cp311-manylinux2014_aarch64",
            metadata=pypi_metadata("torch-2.1.0-cp310-cp310-manylinux2014_aarch64").replace(
                "Requires-Python: >=3.8.0", "Requires-Python: >=3.8.0"
            ),
        )
    )
    for name, version in nvidia_pins(torch_210):
        requires = (
            ["nvidia-nvjitlink-cu12"]
            if name in ("nvidia-cusparse-cu12", "nvidia-cusolver-cu12")
            else []
        )
        add(build_wheel(wheels, name, version, tag="py3-none-manylinux1_x86_64", requires=requires))
    add(build_wheel(wheels, "nvidia-nvjitlink-cu12", "12.3.101", tag="py3-none-manylinux1_x86_64"))
    # torch 2.7.1: manylinux_2_28 wheels, CUDA 12.6 pins, triton 3.3.1 (PyPI's own METADATA)
    torch_271 = pypi_metadata("torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64")
    add(
        build_wheel(
            wheels, "torch", "2.7.1", tag="cp311-cp311-manylinux_2_28_x86_64", metadata=torch_271
        )
    )
    for name, version in nvidia_pins(torch_271):
        add(build_wheel(wheels, name, version, tag="py3-none-manylinux_2_28_x86_64"))
    add(
        build_wheel(
            wheels, "triton", "3.3.1", tag="cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64"
        )
    )
    add(build_wheel(wheels, "sympy", "1.13.3", requires=["mpmath>=1.1.0,<1.4"]))
    add(build_wheel(wheels, "typing-extensions", "4.12.2"))
    add(
        build_wheel(
            wheels,
            "triton",
            "2.1.0",
            tag="cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64",
            requires=["filelock"],
        )
    )
    for name in TORCH_PLAIN:
        add(
            build_wheel(
                wheels,
                name,
                "1.0",
                requires=["mpmath>=0.19"]
                if name == "sympy"
                else ["markupsafe>=2.0"]
                if name == "jinja2"
                else [],
            )
        )
    add(build_wheel(wheels, "mpmath", "1.3.0"))
    add(build_wheel(wheels, "mpmath", "1.4.0a0"))  # a pre-release: never chosen unless asked for
    add(build_wheel(wheels, "markupsafe", "2.1.5", tag=f"cp311-cp311-{LINUX}"))
    add(build_sdist(wheels, "markupsafe", "2.1.5", metadata_version="2.2"))  # for other platforms
    add(
        build_wheel(
            wheels,
            "numpy",
            "1.26.4",
            tag="cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",
            requires_python=">=3.9",
        )
    )
    add(
        build_wheel(
            wheels,
            "numpy",
            "2.0.0",
            tag="cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",
            requires_python=">=3.9",
        )
    )
    add(build_wheel(wheels, "tomli", "2.0.1"))
    add(build_wheel(wheels, "hjson", "3.1.0"))
    add(
        build_wheel(
            wheels, "ninja", "1.11.1", tag="py2.py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64"
        )
    )
    add(build_wheel(wheels, "deepspeed-helper", "1.0", requires=["tomli; python_version < '3.11'"]))
    # deepspeed ships an sdist whose build imports torch (Metadata-Version 2.1: not trusted)
    add(
        build_sdist(
            wheels,
            "deepspeed",
            "0.13.1",
            requires=["hjson", "ninja", "numpy", "torch"],
            metadata_version="2.1",
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    # an sdist whose PKG-INFO (2.2, nothing Dynamic) can be trusted, and one that must be built
    add(build_sdist(wheels, "static-sdist", "1.0", requires=["hjson"], metadata_version="2.2"))
    add(
        build_sdist(
            wheels,
            "built-sdist",
            "1.0",
            requires=["hjson"],
            metadata_version="2.1",
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": METADATA_BACKEND},
        )
    )
    add(
        build_wheel(
            wheels,
            "xformers",
            "0.0.22.post7",
            tag=f"cp311-cp311-{LINUX}",
            requires=["numpy", "torch==2.1.0"],
        )
    )
    # for installed-environment tests: a package whose old version shipped a shared library,
    # and a CUDA 11 nvidia wheel that writes into the same nvidia/ namespace as the cu12 ones
    add(
        build_wheel(
            wheels,
            "oldlib",
            "1.0",
            files={"oldlib/__init__.py": b"", "oldlib/libfoo.so.0": b"\x7fELF-old"},
        )
    )
    add(build_wheel(wheels, "oldlib", "2.0", files={"oldlib/__init__.py": b"VERSION = 2\n"}))
    add(
        build_wheel(
            wheels,
            "nvidia-cublas-cu11",
            "11.10.3.66",
            tag="py3-none-manylinux1_x86_64",
            files={
                "nvidia/cublas/lib/libcublas.so.11": b"\x7fELF-cu11",
                "nvidia/cublas/__init__.py": b"",
            },
        )
    )
    # the "PyTorch index": the cu118 build of torch, and a decoy that must never shadow PyPI's
    cu118 = root / "cu118"
    torch_requires = [
        "filelock",
        "typing-extensions",
        "sympy",
        "networkx",
        "jinja2",
        "fsspec",
        "triton==2.1.0; platform_system == 'Linux' and platform_machine == 'x86_64'",
    ]
    pytorch.add(
        build_wheel(
            cu118, "torch", "2.1.2+cu118", tag="cp311-cp311-linux_x86_64", requires=torch_requires
        ),
        variant="cu118",
    )
    pytorch.add(build_wheel(cu118, "markupsafe", "99.0", tag="py3-none-any"), variant="cu118")
    for version in ("2.1.0", "2.1.2"):
        pytorch.add(
            build_wheel(
                root / "cpu",
                "torch",
                f"{version}+cpu",
                tag="cp311-cp311-linux_x86_64",
                requires=torch_requires[:-1],
            ),
            variant="cpu",
        )
    return World(pypi, pytorch, wheels)


# In-tree PEP 517 backends (no build requirements, so an isolated build needs no network).
IN_TREE_PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]
"""

# Like deepspeed's setup.py: computing metadata imports torch.
NEEDS_TORCH_BACKEND = """\
def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    import torch  # noqa: F401  (not installed in the build environment)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("unused")
"""

METADATA_BACKEND = """\
import os


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, "built_sdist-1.0.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: built-sdist\\nVersion: 1.0\\n"
                "Requires-Dist: hjson\\nRequires-Dist: ninja\\n")
    return "built_sdist-1.0.dist-info"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("unused")
"""
