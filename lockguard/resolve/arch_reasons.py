"""Why a torch build cannot run on a GPU of the intent, said as what happened: which builds dropped
the architecture (or are too old for it), and which build of the same release still has it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from packaging.version import Version

from lockguard.knowledge.tables import Knowledge, TorchRelease
from lockguard.model.versions import CudaVersion, GpuArch, build_runs_on

_FAMILIES = {
    (3, None): "Kepler",
    (5, None): "Maxwell",
    (6, None): "Pascal",
    (7, 0): "Volta",
    (7, 2): "Volta",
    (7, 5): "Turing",
    (8, 9): "Ada",
    (8, None): "Ampere",
    (9, None): "Hopper",
    (10, None): "Blackwell",
    (11, None): "Blackwell",
    (12, None): "Blackwell",
}


# a release's published builds on the platform: (cuda, source) pairs
Published: TypeAlias = Callable[[TorchRelease], list[tuple[CudaVersion, str]]]


def family(arch: GpuArch) -> str:
    return (
        _FAMILIES.get((arch.major, arch.minor))
        or _FAMILIES.get((arch.major, None))
        or f"sm_{arch.major}x"
    )


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def arch_reason(
    knowledge: Knowledge,
    platform: str,
    release: TorchRelease,
    variant: str,
    archs: tuple[GpuArch, ...],
    gpu: GpuArch,
    published: Published,
) -> str:
    """'torch 2.8's cu128 build dropped GPUs older than sm_70 (Maxwell and Pascal); its cu126 build
    still has sm_61: use cuda = "12.6"'. `published(release)` lists a release's (cuda, source)."""
    sass = sorted(a for a in archs if not a.ptx)
    built = " ".join(str(a) for a in archs)
    keepers = _builds_with(knowledge, platform, release, gpu, published)
    if sass and gpu < sass[0]:
        lower = _lower_archs(knowledge, platform, release, sass[0], published)
        older = sorted(
            {family(a) for a in lower} | {family(gpu)},
            key=lambda f: list(_FAMILIES.values()).index(f),
        )
        if lower:
            what = (
                f"torch {release.minor}'s {variant} build dropped GPUs older than {sass[0]} "
                f"({_join(older)}; {gpu} is {family(gpu)})"
            )
        else:
            what = (
                f"torch {release.minor}'s {variant} build starts at {sass[0]} ({built}); "
                f"{gpu} is {family(gpu)}"
            )
    else:
        what = (
            f"torch {release.minor}'s {variant} build ({built}) "
            f"does not run on {gpu} ({family(gpu)})"
        )
        needs = _first_support(knowledge, platform, gpu, published)
        if needs and not keepers:
            what += f"; {gpu} needs a torch built with CUDA >= {needs[0]} (torch >= {needs[1]})"
    if keepers:
        plural = len(keepers) > 1
        cudas = " or ".join(f'"{CudaVersion.from_variant(v)}"' for v in keepers)
        return (
            f"{what}; the {_join(keepers)} build{'s' if plural else ''} "
            f"of torch {release.minor} still "
            f"{'have' if plural else 'has'} {gpu} (cuda = {cudas})"
        )
    last = _last_with(knowledge, platform, release, gpu, published)
    if last and gpu < (sass[0] if sass else gpu):
        return (
            f"{what}; no build of torch {release.minor} has {gpu}; "
            f"the newest torch that has it is {last}"
        )
    return what


def _builds_with(
    knowledge: Knowledge, platform: str, release: TorchRelease, gpu: GpuArch, published: Published
) -> list[str]:
    out = []
    for cuda, _source in published(release):
        row = knowledge.arch_row(cuda.variant, f"{release.minor}.0", platform)
        if row and build_runs_on(row.archs, gpu):
            out.append(cuda.variant)
    return sorted(set(out), key=CudaVersion.from_variant)


def _lower_archs(
    knowledge: Knowledge, platform: str, release: TorchRelease, floor: GpuArch, published: Published
) -> set[GpuArch]:
    """Architectures below `floor` that other builds of the release (or, when none has any, the
    previous release) still carry: what this build dropped."""

    def below(rel: TorchRelease) -> set[GpuArch]:
        found: set[GpuArch] = set()
        for cuda, _source in published(rel):
            row = knowledge.arch_row(cuda.variant, f"{rel.minor}.0", platform)
            found |= {a for a in (row.archs if row else ()) if not a.ptx and a < floor}
        return found

    found = below(release)
    if not found:
        earlier = [r for r in knowledge.releases if Version(r.minor) < Version(release.minor)]
        if earlier:
            found = below(max(earlier, key=lambda r: Version(r.minor)))
    return found


def _last_with(
    knowledge: Knowledge, platform: str, release: TorchRelease, gpu: GpuArch, published: Published
) -> str | None:
    for rel in sorted(knowledge.releases, key=lambda r: Version(r.minor), reverse=True):
        if Version(rel.minor) >= Version(release.minor):
            continue
        keepers = _builds_with(knowledge, platform, rel, gpu, published)
        if keepers:
            return f"{rel.minor} ({', '.join(keepers)})"
    return None


def _first_support(
    knowledge: Knowledge, platform: str, gpu: GpuArch, published: Published
) -> tuple[CudaVersion, str] | None:
    supporting: list[tuple[CudaVersion, Version]] = []
    for rel in knowledge.releases:
        for cuda, _source in published(rel):
            row = knowledge.arch_row(cuda.variant, f"{rel.minor}.0", platform)
            if row and build_runs_on(row.archs, gpu):
                supporting.append((cuda, Version(rel.minor)))
    if not supporting:
        return None
    return min(c for c, _ in supporting), str(min(v for _, v in supporting))
