"""The CUDA facts of one platform of a lock, read from its files (for the coherence rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from lockguard.check.snapshot import Snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.formats import ENVIRONMENT, REQUIREMENTS
from lockguard.model.versions import CudaVersion


@dataclass(frozen=True, slots=True)
class LockFacts:
    platform: str
    pip: Mapping[str, str] = field(default_factory=dict)  # name -> version
    pip_lines: Mapping[str, int] = field(default_factory=dict)
    conda: Mapping[str, str] = field(default_factory=dict)  # name -> version
    conda_lines: Mapping[str, int] = field(default_factory=dict)
    requirements_path: str | None = None
    environment_path: str | None = None
    torch: str | None = None
    torch_cuda: CudaVersion | None = None  # None: CPU build or no torch
    torch_variant: str | None = None
    torch_cuda_why: str = ""

    def conda_cuda(self) -> CudaVersion | None:
        for name in ("cuda-version", "cudatoolkit"):
            if name in self.conda:
                try:
                    return CudaVersion.parse(".".join(self.conda[name].split(".")[:2])).major_minor
                except ValueError:
                    return None
        return None

    def nvcc(self) -> CudaVersion | None:
        for name in ("cuda-nvcc", "cudatoolkit"):
            if name in self.conda:
                try:
                    return CudaVersion.parse(".".join(self.conda[name].split(".")[:2]))
                except ValueError:
                    return None
        return None


def lock_facts(snapshot: Snapshot, knowledge: Knowledge, platform: str) -> LockFacts:
    pip: dict[str, str] = {}
    pip_lines: dict[str, int] = {}
    conda: dict[str, str] = {}
    conda_lines: dict[str, int] = {}
    requirements_path = environment_path = None
    requirements = snapshot.of_kind(REQUIREMENTS.kind, platform)
    if requirements and requirements.requirements:
        requirements_path = requirements.path
        for name, entry in requirements.requirements.entries.items():
            pip[name] = entry.version
            pip_lines[name] = entry.line
    environment = snapshot.of_kind(ENVIRONMENT.kind, platform)
    if environment and environment.environment:
        environment_path = environment.path
        for name, (version, _build, line) in environment.environment.conda.items():
            conda[name] = version
            conda_lines[name] = line
    return LockFacts(
        platform,
        pip,
        pip_lines,
        conda,
        conda_lines,
        requirements_path,
        environment_path,
        *_torch_facts(platform, knowledge, pip.get("torch")),
    )


def facts_of(
    platform: str, pip: dict[str, str], conda: dict[str, str], knowledge: Knowledge
) -> LockFacts:
    """The CUDA facts of one platform's pins (name -> version), wherever they were read from."""
    return LockFacts(
        platform,
        dict(pip),
        {},
        dict(conda),
        {},
        None,
        None,
        *_torch_facts(platform, knowledge, pip.get("torch")),
    )


def _torch_facts(
    platform: str, knowledge: Knowledge, torch: str | None
) -> tuple[str | None, CudaVersion | None, str | None, str]:
    """(torch, torch_cuda, torch_variant, torch_cuda_why) of a lock that pins `torch` (or none)."""
    if not torch:
        return None, None, None, ""
    try:
        version = Version(torch)
    except InvalidVersion:
        return torch, None, None, ""
    release_numbers, local = version.release, version.local
    if local == "cpu":
        return torch, None, "cpu", f"torch {torch} is a CPU build"
    if local and local.startswith("cu"):
        return torch, CudaVersion.from_variant(local), local, f"torch {torch} is a {local} build"
    release = knowledge.release(
        f"{release_numbers[0]}.{release_numbers[1] if len(release_numbers) > 1 else 0}"
    )
    if release is None:
        return torch, None, None, f"PyPI's torch {torch} for {platform} is a CPU build"
    cuda = release.pypi_cuda_for(platform)
    if cuda is None:
        return torch, None, "cpu", f"PyPI's torch {torch} for {platform} is a CPU build"
    return (
        torch,
        cuda,
        cuda.variant,
        f"PyPI's torch {torch} is a {cuda.variant} build ({release.origin})",
    )
