"""Nodes for the fleet tests: an environment that matches the example project's lock (fake
distributions at the locked versions, the fake torch), a CUDA 12.1 toolkit folder with its nvcc,
and the environment variables that make such a node healthy, so one changed fact makes a node
deviate."""

from __future__ import annotations

import json
from pathlib import Path

from lockguard.lockfiles import requirements_lock
from tests.support.envs import make_venv, site_packages
from tests.support.fake_torch import add_dist, install_fake_torch
from tests.support.native_libs import fake_nvcc

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "gpu-training"
TORCH = {
    "version": "2.1.2",
    "cuda": "12.1",
    "cudnn": 8902,
    "cuda_available": False,
    "arch_list": ["sm_80", "sm_90"],
    "devices": [],
}


def healthy_venv(folder: Path, lock: Path = EXAMPLE / "requirements.lock") -> Path:
    """A venv whose distributions are the lock's pins (torch the fake one, at the lock's
    version)."""
    venv = make_venv(folder)
    site = site_packages(venv)
    for name, entry in requirements_lock.parse(lock.read_text()).entries.items():
        if name == "torch":
            install_fake_torch(site, {**TORCH, "version": entry.version})
        else:
            add_dist(site, name, entry.version)
    return venv


def cuda_toolkit(folder: Path, version: str = "12.1.105") -> Path:
    """A CUDA toolkit folder (version.json, bin/nvcc) for CUDA_HOME."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "version.json").write_text(
        json.dumps({"cuda": {"name": "CUDA SDK", "version": version}})
    )
    major_minor = ".".join(version.split(".")[:2])
    fake_nvcc(folder / "bin", major_minor, version)
    return folder


def healthy_environment(toolkit: Path) -> dict[str, str]:
    return {"CUDA_HOME": str(toolkit), "LD_LIBRARY_PATH": ""}
