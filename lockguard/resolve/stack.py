"""CUDA stack queries: which torch builds, toolkits and conda specs fit a target.

Pure: knowledge and target in, `CudaStack` values out. When nothing fits, `Unsatisfiable` names
the facts that clash ("torch 2.1 was published for cu118 and cu121, not cu124") with the
knowledge rows they come from.
"""

from __future__ import annotations

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from lockguard.knowledge.tables import Knowledge, Toolkit, TorchPatch, TorchRelease
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.cuda_stack import CudaStack
from lockguard.model.target import Target
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, build_runs_on
from lockguard.resolve.arch_reasons import arch_reason

PYPI = "pypi"
MAX_REASONS = 3  # an explanation names the newest releases' reasons; the conflicts list has all
PYTORCH_INDEX = "pytorch-index"


def cuda_ceiling(knowledge: Knowledge, driver: DriverVersion) -> CudaVersion | None:
    """The newest CUDA toolkit whose release driver is not newer than `driver`."""
    fits = [t.version for t in knowledge.toolkits if t.ga_driver and t.ga_driver <= driver]
    return max(fits) if fits else None


def torch_spec(pip_requirements: tuple[str, ...]) -> SpecifierSet | None:
    """The torch specifier of the intent's pip requirements (None: no torch asked for)."""
    found: SpecifierSet | None = None
    for text in dict.fromkeys(pip_requirements):
        req = Requirement(text)
        if canonicalize_name(req.name) == "torch":
            found = req.specifier if found is None else found & req.specifier
    return found


def query_stacks(
    knowledge: Knowledge,
    target: Target,
    torch: SpecifierSet | None,
    *,
    wants_torch: bool = True,
    pytorch_index: str = "https://download.pytorch.org/whl",
) -> list[CudaStack]:
    """Every consistent stack for `target`, newest torch first. Raises Unsatisfiable."""
    if target.cuda.mode != "none" and target.system == "Darwin":
        raise Unsatisfiable(
            f"CUDA {target.cuda} was asked for, but {target.platform} has no CUDA "
            "(NVIDIA dropped macOS after CUDA 10.2)",
            conflicts=[
                Conflict(f"cuda = {target.cuda}", "intent"),
                Conflict(f"platform {target.platform}", "intent"),
            ],
            hint='use cuda = "none" for macOS platforms, or lock them separately',
        )
    if not wants_torch:
        return [_stack_without_torch(knowledge, target)]
    return _TorchQuery(knowledge, target, torch, pytorch_index).run()


def _stack_without_torch(knowledge: Knowledge, target: Target) -> CudaStack:
    cuda = _requested_cuda(knowledge, target)
    toolkit = _toolkit_or_fail(knowledge, cuda) if cuda else None
    if toolkit:
        _check_driver(toolkit, target)
    glibc = _sysroot_glibc(knowledge, target, cuda, None)
    specs, facts = conda_specs(knowledge, target, cuda, toolkit, glibc)
    return CudaStack(
        platform=target.platform,
        cuda=cuda,
        conda_specs=specs,
        sysroot_glibc=glibc,
        gcc_max=toolkit.max_gcc if toolkit else None,
        min_driver=toolkit.min_driver if toolkit else None,
        variant=cuda.variant if cuda else "cpu",
        facts=facts,
    )


def _requested_cuda(knowledge: Knowledge, target: Target) -> CudaVersion | None:
    if target.cuda.mode == "none":
        return None
    if target.cuda.mode == "version":
        return target.cuda.version
    ceiling = target.cuda_max or (cuda_ceiling(knowledge, target.driver) if target.driver else None)
    if ceiling is None:
        raise Unsatisfiable(
            'cuda = "auto" needs a driver to read the CUDA ceiling from, and there is none'
        )
    known = [t.version for t in knowledge.toolkits if t.version <= ceiling]
    if not known:
        raise Unsatisfiable(
            f"the driver supports CUDA up to {ceiling}, older than any toolkit lockguard knows"
        )
    return max(known)


def _toolkit_or_fail(knowledge: Knowledge, cuda: CudaVersion) -> Toolkit:
    toolkit = knowledge.toolkit(cuda)
    if toolkit is None:
        known = ", ".join(str(t.version) for t in knowledge.toolkits)
        raise Unsatisfiable(
            f"CUDA {cuda} is not a toolkit lockguard knows (known: {known})",
            conflicts=[Conflict(f"cuda = {cuda}", "intent")],
            hint="pick one of the known toolkits (there is no CUDA 12.7)",
        )
    return toolkit


def _check_driver(toolkit: Toolkit, target: Target) -> None:
    if target.driver and target.driver < toolkit.min_driver:
        raise Unsatisfiable(
            f"CUDA {toolkit.version} needs driver >= {toolkit.min_driver}; "
            f"the floor is {target.driver}",
            conflicts=[
                Conflict(
                    f"CUDA {toolkit.version} needs driver >= {toolkit.min_driver}", toolkit.origin
                ),
                Conflict(f"driver = {target.driver}", "intent"),
            ],
            hint="lower cuda to one the driver runs (11.8 needs >= 450.80.02), "
            "or raise the driver floor",
        )


def _sysroot_glibc(
    knowledge: Knowledge, target: Target, cuda: CudaVersion | None, release: TorchRelease | None
) -> str | None:
    if not target.is_linux:
        return None
    needed = [release.min_glibc] if release else []
    if cuda:
        needed += [
            r.glibc for r in knowledge.sysroots if r.cuda.contains(str(cuda), prereleases=True)
        ]
    needed = needed or ["2.17"]
    return max(needed, key=lambda g: tuple(int(p) for p in g.split(".")))


def conda_specs(
    knowledge: Knowledge,
    target: Target,
    cuda: CudaVersion | None,
    toolkit: Toolkit | None,
    glibc: str | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The conda specs of a stack and the origins of the rows they come from."""
    values = {
        "python": str(target.python),
        "platform": target.platform,
        "glibc": glibc or "",
        "cuda": str(cuda) if cuda else "",
        "gcc": str(toolkit.max_gcc) if toolkit else "",
    }
    specs: list[str] = []
    facts: list[str] = []
    for row in knowledge.python_specs:
        specs += [s.format(**values) for s in row.specs]
        facts.append(row.origin)
    if cuda:
        for row in knowledge.cuda_specs:
            if row.cuda is not None and row.cuda.contains(str(cuda), prereleases=True):
                specs += [s.format(**values) for s in row.specs]
                facts.append(row.origin)
    for row in knowledge.build_specs:
        # sysroot and compilers serve nvcc builds (JIT ops, extensions): CPU stacks leave them out
        if target.platform in row.platforms and glibc and toolkit:
            specs += [spec.format(**values) for spec in row.specs]
            facts.append(row.origin)
    return tuple(specs), tuple(facts)


class _Reject(Exception):
    def __init__(self, reason: str, conflicts: list[Conflict]):
        super().__init__(reason)
        self.reason = reason
        self.conflicts = conflicts


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _TorchQuery:
    def __init__(
        self, knowledge: Knowledge, target: Target, spec: SpecifierSet | None, pytorch_index: str
    ):
        self.k = knowledge
        self.target = target
        self.spec = spec
        self.pytorch_index = pytorch_index.rstrip("/")

    def run(self) -> list[CudaStack]:
        asked = self.target.cuda.version
        # the "version" mode always has one
        if self.target.cuda.mode == "version" and asked is not None:
            _toolkit_or_fail(self.k, asked)
        patches = self.k.patches_matching(self.spec)
        if not patches:
            low, high = self.k.torch_range
            raise Unsatisfiable(
                f"torch{self.spec} matches no torch release lockguard knows ({low} to {high})",
                conflicts=[Conflict(f"torch{self.spec}", "intent")],
                hint="widen the torch requirement, or update lockguard's constraints/torch.toml",
            )
        stacks: list[CudaStack] = []
        reasons: dict[str, list[Conflict]] = {}
        for patch in patches:
            try:
                stacks.append(self._stack(patch))
            except _Reject as reject:
                reasons.setdefault(reject.reason, reject.conflicts)
        if stacks:
            return stacks
        conflicts = list(dict.fromkeys(c for group in reasons.values() for c in group))
        shown = list(reasons)[:MAX_REASONS]
        more = len(reasons) - len(shown)
        message = "; ".join(shown) + (
            f"; and {more} older releases ruled out likewise" if more > 0 else ""
        )
        raise Unsatisfiable(message, conflicts=conflicts, hint=self._hint())

    def _hint(self) -> str:
        return (
            "change python, cuda, the torch requirement, the driver floor or the GPU list "
            "so they agree "
            "(`lockguard constraints show torch X.Y` lists what exists)"
        )

    def _stack(self, patch: TorchPatch) -> CudaStack:
        release = self.k.release(patch.minor)
        if release is None:
            raise _Reject(
                f"torch {patch.minor} has no [[release]] row in the knowledge",
                [Conflict(f"torch {patch.version}", patch.origin)],
            )
        self._check_python(release, patch)
        cuda, source = self._variant(release)
        toolkit = _toolkit_or_fail(self.k, cuda) if cuda else None
        if toolkit:
            try:
                _check_driver(toolkit, self.target)
            except Unsatisfiable as exc:
                raise _Reject(exc.message, exc.conflicts) from None
        self._check_glibc(release)
        variant = cuda.variant if cuda else "cpu"
        arch_row = self.k.arch_row(variant, patch.version, self.target.platform) if cuda else None
        archs = arch_row.archs if arch_row else ()
        if cuda and arch_row:
            self._check_archs(release, variant, archs, arch_row.origin)
        pins: tuple[str, ...] = ()
        cudnn = nccl = triton = None
        if source == PYPI and cuda:
            reqs = patch.requirements_for(self.target.marker_environment())
            pins = tuple(str(r) for r in reqs)
            for req in reqs:
                name = canonicalize_name(req.name)
                exact = _exact(req.specifier)
                if name.startswith("nvidia-cudnn"):
                    cudnn = exact
                elif name.startswith("nvidia-nccl"):
                    nccl = exact
                elif name == "triton":
                    triton = exact or str(req.specifier)
        glibc = _sysroot_glibc(self.k, self.target, cuda, release)
        specs, facts = conda_specs(self.k, self.target, cuda, toolkit, glibc)
        facts = (
            (release.origin, patch.origin)
            + ((arch_row.origin,) if arch_row else ())
            + ((toolkit.origin,) if toolkit else ())
            + facts
        )
        local = "" if source == PYPI else f"+{variant}"
        return CudaStack(
            platform=self.target.platform,
            cuda=cuda,
            conda_specs=specs,
            sysroot_glibc=glibc,
            gcc_max=toolkit.max_gcc if toolkit else None,
            min_driver=toolkit.min_driver if toolkit else None,
            torch=patch.version + local,
            variant=variant,
            source=source,
            index_url=None if source == PYPI else f"{self.pytorch_index}/{variant}",
            archs=archs,
            pins=pins,
            cudnn=cudnn,
            nccl=nccl,
            triton=triton,
            cxx11_abi=release.cxx11_abi,
            facts=facts,
        )

    def _check_python(self, release: TorchRelease, patch: TorchPatch) -> None:
        python = self.target.python
        if python not in release.pythons or not patch.requires_python.contains(f"{python}.0"):
            low, high = min(release.pythons), max(release.pythons)
            raise _Reject(
                f"torch {release.minor} has wheels for Python {low} to {high}, not {python}",
                [
                    Conflict(f"torch {release.minor} wheels: Python {low}-{high}", release.origin),
                    Conflict(f"python = {python}", "intent"),
                ],
            )

    def _published(self, release: TorchRelease) -> list[tuple[CudaVersion, str]]:
        """(cuda, source) pairs a release offers on the target platform, PyPI's own first."""
        offered: list[tuple[CudaVersion, str]] = []
        pypi_cuda = release.pypi_cuda_for(self.target.platform)
        if pypi_cuda:
            offered.append((pypi_cuda, PYPI))
        for variant in release.index_variants_for(self.target.platform):
            cuda = CudaVersion.from_variant(variant)
            if cuda != pypi_cuda:
                offered.append((cuda, PYTORCH_INDEX))
        return offered

    def _variant(self, release: TorchRelease) -> tuple[CudaVersion | None, str]:
        platform = self.target.platform
        offered = self._published(release)
        if self.target.cuda.mode == "none":
            # PyPI's wheel is a CPU build on macOS (and aarch64 before 2.11); else the +cpu index
            cpu_on_pypi = release.pypi_cuda_for(platform) is None and platform != "win-64"
            return None, PYPI if cpu_on_pypi else PYTORCH_INDEX
        if self.target.cuda.mode == "auto":
            ceiling = _requested_cuda(self.k, self.target)
            fits = [pair for pair in offered if pair[0] <= ceiling]
            if not fits:
                raise _Reject(
                    f"torch {release.minor} needs CUDA >= {min(c for c, _ in offered)}; "
                    f"the driver runs up to {ceiling}",
                    [
                        Conflict(f"torch {release.minor} CUDA builds", release.origin),
                        Conflict("cuda = auto", "intent"),
                    ],
                )
            best = max(c for c, _ in fits)
            return best, next(s for c, s in fits if c == best)
        wanted = self.target.cuda.version
        if wanted is None:  # neither "none" nor "auto": the "version" mode, which always has one
            raise ValueError(f"cuda mode {self.target.cuda.mode!r} without a version")
        for cuda, source in offered:
            if cuda == wanted:
                return cuda, source
        names = sorted((c.variant for c, _ in offered), key=lambda v: CudaVersion.from_variant(v))
        where = "" if platform == "linux-64" else f" on {platform}"
        published = _join(names) if names else "no CUDA variant"
        raise _Reject(
            f"torch {release.minor} was published for {published}{where}, not {wanted.variant}",
            [
                Conflict(
                    f"torch {release.minor} CUDA variants: {', '.join(names) or 'none'}",
                    release.origin,
                ),
                Conflict(f"cuda = {wanted}", "intent"),
            ],
        )

    def _check_glibc(self, release: TorchRelease) -> None:
        glibc = self.target.glibc
        if glibc and _glibc_key(release.min_glibc) > _glibc_key(glibc):
            raise _Reject(
                f"torch {release.minor} wheels need glibc >= {release.min_glibc} "
                f"({release.manylinux}); the target glibc is {glibc}",
                [
                    Conflict(f"torch {release.minor}: {release.manylinux}", release.origin),
                    Conflict(f"glibc = {glibc}", "intent"),
                ],
            )

    def _check_archs(
        self, release: TorchRelease, variant: str, archs: tuple[GpuArch, ...], origin: str
    ) -> None:
        for gpu in self.target.gpu_archs:
            if not build_runs_on(archs, gpu):
                built = " ".join(str(a) for a in archs)
                reason = arch_reason(
                    self.k, self.target.platform, release, variant, archs, gpu, self._published
                )
                raise _Reject(
                    reason,
                    [
                        Conflict(f"torch {release.minor} {variant} archs: {built}", origin),
                        Conflict(f"gpu = {gpu}", "intent"),
                    ],
                )


def _exact(spec: SpecifierSet) -> str | None:
    items = list(spec)
    if len(items) == 1 and items[0].operator in ("==", "==="):
        return items[0].version
    return None


def _glibc_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))
