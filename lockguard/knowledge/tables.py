"""Typed rows of the knowledge and the lookups over them.

Every row keeps `source` (the citation) and `origin` (file:line in constraints/), so an
explanation can say which fact it rests on and where that fact is written down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from lockguard.knowledge.components import Components
from lockguard.knowledge.row import Row
from lockguard.knowledge.sdist_metadata import SdistMetadata
from lockguard.knowledge.shared_files import WheelFiles
from lockguard.model.names import NamedSpec, canonical_name
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion

if TYPE_CHECKING:  # an annotation only: its parser is imported where requirements are parsed
    from packaging.requirements import Requirement


@dataclass(frozen=True, slots=True)
class TorchRelease(Row):
    minor: str
    pypi_cuda: CudaVersion
    pypi_aarch64: CudaVersion | None  # None: PyPI's aarch64 wheel is a CPU build
    index_variants: tuple[str, ...]
    pythons: tuple[PythonVersion, ...]
    manylinux: str
    min_glibc: str
    cxx11_abi: bool
    # CUDA variants of the index's linux aarch64 wheels
    index_aarch64: tuple[str, ...] | None = None

    def pypi_cuda_for(self, platform: str) -> CudaVersion | None:
        """The CUDA of PyPI's own wheel on a conda platform; None means a CPU build."""
        return {"linux-64": self.pypi_cuda, "linux-aarch64": self.pypi_aarch64}.get(platform)

    def index_variants_for(self, platform: str) -> tuple[str, ...]:
        """CUDA variants the PyTorch index carries for a platform: x86_64 Linux and Windows, and
        the linux aarch64 (sbsa) CUDA builds of torch >= 2.7 (GH200, GB200)."""
        if platform == "linux-aarch64":
            return self.index_aarch64 or ()
        return self.index_variants if platform in ("linux-64", "win-64") else ()


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class TorchPatch(Row):
    version: str
    requires_python: SpecifierSet
    wheel: str
    uploaded: str | None
    requires_text: tuple[str, ...]

    @cached_property
    def requires(self) -> tuple[Requirement, ...]:
        """The CUDA-stack Requires-Dist, parsed on first use."""
        # packaging's requirement parser (markers, tags: about 15 ms) only where the resolver or
        # verify reads them: the check path loads the knowledge without it
        from packaging.requirements import Requirement

        return tuple(Requirement(t) for t in self.requires_text)

    @property
    def minor(self) -> str:
        release = Version(self.version).release
        return f"{release[0]}.{release[1]}"

    def requirements_for(self, environment: dict[str, str]) -> tuple[Requirement, ...]:
        """The CUDA-stack requirements whose markers hold on the target environment."""
        return tuple(r for r in self.requires if r.marker is None or r.marker.evaluate(environment))


@dataclass(frozen=True, slots=True)
class ArchRow(Row):
    variant: str
    torch: SpecifierSet
    archs: tuple[GpuArch, ...]
    platforms: tuple[str, ...] | None = None  # None: every platform without a row of its own


@dataclass(frozen=True, slots=True)
class Toolkit(Row):
    version: CudaVersion
    min_driver: DriverVersion
    ga_driver: DriverVersion | None
    max_gcc: int
    sm: tuple[GpuArch, ...]
    cudnn: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CondaSpecsRow(Row):
    specs: tuple[str, ...]
    cuda: SpecifierSet | None = None
    platforms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SysrootRow(Row):
    glibc: str
    cuda: SpecifierSet


@dataclass(frozen=True, slots=True)
class LibraryRow(Row):
    conda: str
    pypi: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PythonNameRow(Row):
    conda: str
    pypi: str


@dataclass(frozen=True, slots=True)
class NvccRule(Row):
    package: str
    rule: str
    minor_mismatch_ok: Mapping[int, tuple[CudaVersion, ...]]
    override_env: str | None

    def accepts(self, nvcc: CudaVersion, torch_cuda: CudaVersion) -> bool:
        """deepspeed's assert_no_cuda_mismatch: equal major.minor, or both in the major's list."""
        nvcc, torch_cuda = nvcc.major_minor, torch_cuda.major_minor
        if nvcc == torch_cuda:
            return True
        allowed = self.minor_mismatch_ok.get(nvcc.major, ())
        return nvcc.major == torch_cuda.major and nvcc in allowed and torch_cuda in allowed


@dataclass(frozen=True, slots=True)
class GpuRule(Row):
    package: str
    min_arch: GpuArch
    min_cuda: CudaVersion
    min_torch: str
    why: str


@dataclass(frozen=True, slots=True)
class TorchPinRule(Row):
    package: str
    pins: Mapping[str, SpecifierSet]


@dataclass(frozen=True, slots=True)
class Hazard(Row):
    id: str
    when: NamedSpec
    platforms: tuple[str, ...]
    constrain: NamedSpec
    why: str

    def applies(self, name: str, version: str, platform: str) -> bool:
        return (
            platform in self.platforms
            and canonical_name(name) == self.when.name
            and self.when.contains(Version(version).public)
        )


def _no_components() -> Components:
    return Components((), ())


def _no_wheel_files() -> WheelFiles:
    return WheelFiles((), ())


def _no_sdist_metadata() -> SdistMetadata:
    return SdistMetadata(())


def _version_key(text: str) -> Version:
    return Version(text)


@dataclass(frozen=True, slots=True)
class Knowledge:
    releases: tuple[TorchRelease, ...]
    patches: tuple[TorchPatch, ...]
    archs: tuple[ArchRow, ...]
    toolkits: tuple[Toolkit, ...]
    cuda_specs: tuple[CondaSpecsRow, ...]
    build_specs: tuple[CondaSpecsRow, ...]
    python_specs: tuple[CondaSpecsRow, ...]
    sysroots: tuple[SysrootRow, ...]
    libraries: tuple[LibraryRow, ...]
    python_names: tuple[PythonNameRow, ...]
    nvcc_rules: tuple[NvccRule, ...]
    gpu_rules: tuple[GpuRule, ...]
    torch_pins: tuple[TorchPinRule, ...]
    hazards: tuple[Hazard, ...]
    components: Components = field(default_factory=lambda: _no_components())
    wheel_files: WheelFiles = field(default_factory=lambda: _no_wheel_files())
    sdist_metadata: SdistMetadata = field(default_factory=lambda: _no_sdist_metadata())
    files: tuple[str, ...] = field(default=())

    # -- torch ---------------------------------------------------------------------------------

    def release(self, minor: str) -> TorchRelease | None:
        return next((r for r in self.releases if r.minor == minor), None)

    def patches_matching(self, spec: SpecifierSet | None) -> list[TorchPatch]:
        """Known PyPI patch releases allowed by `spec`, newest first."""
        found = [
            p for p in self.patches if spec is None or spec.contains(p.version, prereleases=True)
        ]
        return sorted(found, key=lambda p: _version_key(p.version), reverse=True)

    def patch(self, version: str) -> TorchPatch | None:
        public = Version(version).public
        return next((p for p in self.patches if p.version == public), None)

    def arch_row(
        self, variant: str, torch_version: str, platform: str | None = None
    ) -> ArchRow | None:
        """The GPU architectures of a torch build; a platform's own row wins over the general
        one."""
        public = Version(torch_version).public
        rows = [
            a
            for a in self.archs
            if a.variant == variant and a.torch.contains(public, prereleases=True)
        ]
        own = [a for a in rows if platform and a.platforms and platform in a.platforms]
        found = own or [a for a in rows if not a.platforms]
        return found[0] if found else None

    @property
    def torch_range(self) -> tuple[str, str]:
        versions = sorted((p.version for p in self.patches), key=_version_key)
        return versions[0], versions[-1]

    # -- CUDA ----------------------------------------------------------------------------------

    def toolkit(self, version: CudaVersion) -> Toolkit | None:
        wanted = version.major_minor
        return next((t for t in self.toolkits if t.version == wanted), None)

    def nvcc_rule(self, package: str) -> NvccRule | None:
        name = canonical_name(package)
        return next((r for r in self.nvcc_rules if canonical_name(r.package) == name), None)

    def gpu_rule(self, package: str) -> GpuRule | None:
        name = canonical_name(package)
        return next((r for r in self.gpu_rules if canonical_name(r.package) == name), None)

    # -- conda <-> PyPI ------------------------------------------------------------------------

    def library_for_conda(self, name: str) -> LibraryRow | None:
        return next((row for row in self.libraries if row.conda == name), None)

    def pypi_name_of_conda(self, conda_name: str) -> str:
        row = next((r for r in self.python_names if r.conda == conda_name), None)
        return canonical_name(row.pypi if row else conda_name)

    def hazards_for(self, name: str, version: str, platform: str) -> list[Hazard]:
        return [h for h in self.hazards if h.applies(name, version, platform)]
