"""The CUDA facts of one platform of a lock, read from its files (for the coherence rules)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from lockguard.check.snapshot import Snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.model.record import field, record
from lockguard.model.versions import CudaVersion


@record
class LockFacts:
    platform: str
    pip: dict[str, str] = field(default_factory=dict)  # name -> version
    pip_lines: dict[str, int] = field(default_factory=dict)
    conda: dict[str, str] = field(default_factory=dict)  # name -> version
    conda_lines: dict[str, int] = field(default_factory=dict)
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
    facts = LockFacts(platform)
    requirements = snapshot.of_kind("requirements", platform)
    if requirements and requirements.requirements:
        facts.requirements_path = requirements.path
        for name, entry in requirements.requirements.entries.items():
            facts.pip[name] = entry.version
            facts.pip_lines[name] = entry.line
    environment = snapshot.of_kind("environment", platform)
    if environment and environment.environment:
        facts.environment_path = environment.path
        for name, (version, _build, line) in environment.environment.conda.items():
            facts.conda[name] = version
            facts.conda_lines[name] = line
    torch = facts.pip.get("torch")
    if torch:
        facts.torch = torch
        _torch_cuda(facts, knowledge, torch)
    return facts


def facts_of(platform: str, pip: dict[str, str], conda: dict[str, str], knowledge: Knowledge) -> LockFacts:
    """The CUDA facts of one platform's pins (name -> version), wherever they were read from."""
    facts = LockFacts(platform, pip=dict(pip), conda=dict(conda))
    torch = facts.pip.get("torch")
    if torch:
        facts.torch = torch
        _torch_cuda(facts, knowledge, torch)
    return facts


def _torch_cuda(facts: LockFacts, knowledge: Knowledge, torch: str) -> None:
    try:
        version = Version(torch)
    except InvalidVersion:
        return
    release_numbers, local = version.release, version.local
    if local == "cpu":
        facts.torch_variant, facts.torch_cuda_why = "cpu", f"torch {torch} is a CPU build"
        return
    if local and local.startswith("cu"):
        facts.torch_cuda = CudaVersion.from_variant(local)
        facts.torch_variant = local
        facts.torch_cuda_why = f"torch {torch} is a {local} build"
        return
    release = knowledge.release(f"{release_numbers[0]}.{release_numbers[1] if len(release_numbers) > 1 else 0}")
    cuda = release.pypi_cuda_for(facts.platform) if release else None
    if cuda is None:
        facts.torch_variant = "cpu" if release else None
        facts.torch_cuda_why = f"PyPI's torch {torch} for {facts.platform} is a CPU build"
        return
    facts.torch_cuda = cuda
    facts.torch_variant = cuda.variant
    facts.torch_cuda_why = f"PyPI's torch {torch} is a {cuda.variant} build ({release.origin})"
