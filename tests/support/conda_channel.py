"""A local conda channel of tiny but real packages (.tar.bz2 with info/index.json, info/paths.json
and a payload file), indexed by rattler, shaped like conda-forge's CUDA packaging."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

TIMESTAMP = 1704067200000  # 2024-01-01, in ms like conda-forge's repodata


@dataclass
class Pkg:
    name: str
    version: str
    build: str
    subdir: str = "linux-64"
    depends: list[str] = field(default_factory=list)
    constrains: list[str] = field(default_factory=list)
    noarch: str | None = None
    build_number: int = 0
    files: dict[str, bytes] = field(default_factory=dict)


def build_package(channel: Path, pkg: Pkg) -> Path:
    subdir = "noarch" if pkg.noarch else pkg.subdir
    folder = channel / subdir
    folder.mkdir(parents=True, exist_ok=True)
    files = dict(pkg.files) or {
        f"share/{pkg.name}/{pkg.version}.txt": f"{pkg.name} {pkg.version}\n".encode()
    }
    index = {
        "name": pkg.name,
        "version": pkg.version,
        "build": pkg.build,
        "build_number": pkg.build_number,
        "depends": pkg.depends,
        "constrains": pkg.constrains,
        "subdir": subdir,
        "license": "MIT",
        "timestamp": TIMESTAMP,
    }
    if pkg.noarch:
        index["noarch"] = pkg.noarch
    else:
        index["platform"], index["arch"] = {
            "linux-64": ("linux", "x86_64"),
            "linux-aarch64": ("linux", "aarch64"),
        }[pkg.subdir]
    paths = {
        "paths": [
            {
                "_path": p,
                "path_type": "hardlink",
                "sha256": hashlib.sha256(d).hexdigest(),
                "size_in_bytes": len(d),
            }
            for p, d in files.items()
        ],
        "paths_version": 1,
    }
    members = {
        "info/index.json": json.dumps(index, indent=2).encode(),
        "info/paths.json": json.dumps(paths, indent=2).encode(),
        "info/files": ("\n".join(files) + "\n").encode(),
        **files,
    }
    path = folder / f"{pkg.name}-{pkg.version}-{pkg.build}.tar.bz2"
    with tarfile.open(path, "w:bz2") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mtime = TIMESTAMP // 1000
            info.mode = 0o755 if member.startswith("bin/") else 0o644
            archive.addfile(info, io.BytesIO(data))
    return path


def cuda_forge_packages() -> list[Pkg]:
    """conda-forge's CUDA packaging in miniature."""
    pkgs: list[Pkg] = []
    for cuda in ("11.8", "12.1", "12.4", "12.6", "13.0"):
        major = cuda.split(".")[0]
        pkgs.append(
            Pkg(
                "cuda-version",
                cuda,
                "h0",
                noarch="generic",
                constrains=[f"__cuda >={major}", f"cudatoolkit {cuda}|{cuda}.*"],
            )
        )
    nvcc = {"12.1": "12.1.105", "12.4": "12.4.131", "12.6": "12.6.85", "13.0": "13.0.88"}
    for cuda, version in nvcc.items():
        nxt = f"{cuda.split('.')[0]}.{int(cuda.split('.')[1]) + 1}"
        for subdir in ("linux-64", "linux-aarch64"):
            pkgs.append(
                Pkg(
                    "cuda-cudart-dev",
                    version,
                    "h0",
                    subdir,
                    depends=[f"cuda-version >={cuda},<{nxt}.0a0"],
                )
            )
            pkgs.append(
                Pkg(
                    "cuda-nvcc",
                    version,
                    "h0",
                    subdir,
                    depends=[f"cuda-version >={cuda},<{nxt}.0a0", f"cuda-cudart-dev {cuda}.*"],
                )
            )
    pkgs.append(
        Pkg(
            "cudatoolkit",
            "11.8.0",
            "h0",
            depends=["__glibc >=2.17,<3.0.a0"],
            constrains=["__cuda >=11"],
        )
    )
    pkgs += [
        Pkg("nccl", "2.18.1.1", "h12", depends=["cuda-version >=12,<13.0a0"]),
        Pkg("nccl", "2.19.3.1", "h12", depends=["cuda-version >=12,<13.0a0"]),
        Pkg("nccl", "2.18.3.1", "h11", depends=["cuda-version >=11,<12.0a0"]),
        Pkg("cudnn", "8.9.2.26", "h12", depends=["cuda-version >=12,<13.0a0"]),
        Pkg("cudnn", "8.9.2.26", "h11", depends=["cuda-version >=11,<12.0a0"]),
    ]
    for glibc in ("2.17", "2.28"):
        pkgs.append(Pkg("sysroot_linux-64", glibc, "h0", noarch="generic"))
        pkgs.append(Pkg("sysroot_linux-aarch64", glibc, "h0", noarch="generic"))
    for gcc in ("11.4.0", "12.3.0", "13.2.0", "14.2.0"):
        for subdir in ("linux-64", "linux-aarch64"):
            arch = subdir.split("-")[1]
            for tool in ("gcc", "gxx"):
                pkgs.append(Pkg(f"{tool}_linux-{arch}", gcc, "h0", subdir))
    import sys

    # the test's own interpreter behind a wrapper, so an installed prefix has a working bin/python
    wrapper = f'#!/bin/sh\nexec "{sys.executable}" "$@"\n'.encode()
    for subdir in ("linux-64", "linux-aarch64"):
        for python in ("3.10.13", "3.11.8"):
            pkgs.append(Pkg("python", python, "h0_cpython", subdir, files={"bin/python": wrapper}))
        pkgs.append(Pkg("numpy", "1.26.4", "py311h0", subdir, depends=["python >=3.11,<3.12.0a0"]))
    pkgs.append(Pkg("pip", "24.0", "pyhd8ed1ab_0", noarch="python", depends=["python >=3.7"]))
    return pkgs


def build_channel(root: Path, packages: list[Pkg] | None = None) -> Path:
    import asyncio

    import rattler.index

    channel = root / "channel"
    for subdir in ("linux-64", "linux-aarch64", "noarch"):
        (channel / subdir).mkdir(parents=True, exist_ok=True)
    for pkg in packages or cuda_forge_packages():
        build_package(channel, pkg)
    asyncio.run(rattler.index.index_fs(channel, write_zst=False, write_shards=False))
    return channel
