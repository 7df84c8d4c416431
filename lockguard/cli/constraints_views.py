"""Views of the knowledge for `lockguard constraints show`: sections of rows plus JSON data (the
tables a command renders; the CUDA view shows the conda specs a resolve would pin)."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet

from lockguard.errors import InputError
from lockguard.knowledge.tables import Knowledge
from lockguard.model.intent import CudaRequest
from lockguard.model.target import Target
from lockguard.model.versions import CudaVersion, PythonVersion
from lockguard.resolve.stack import conda_specs


@dataclass
class Section:
    title: str
    columns: list[str]
    rows: list[list[object]] = field(default_factory=list)


@dataclass
class View:
    sections: list[Section]
    data: dict


def _archs(archs) -> str:
    return " ".join(str(a) for a in archs)


def overview(k: Knowledge) -> View:
    releases = Section(
        "torch releases",
        ["torch", "PyPI CUDA", "PyTorch index", "Python", "glibc", "C++11 ABI", "source"],
    )
    for r in k.releases:
        releases.rows.append(
            [
                r.minor,
                str(r.pypi_cuda),
                " ".join(r.index_variants),
                f"{min(r.pythons)}-{max(r.pythons)}",
                r.min_glibc,
                r.cxx11_abi,
                r.origin,
            ]
        )
    toolkits = Section(
        "CUDA toolkits",
        ["CUDA", "min driver", "GA driver", "max gcc", "GPU archs", "cuDNN", "source"],
    )
    for t in k.toolkits:
        toolkits.rows.append(
            [
                str(t.version),
                str(t.min_driver),
                str(t.ga_driver or "?"),
                t.max_gcc,
                f"{t.sm[0]}..{t.sm[-1]}",
                " ".join(map(str, t.cudnn)),
                t.origin,
            ]
        )
    return View(
        [releases, toolkits],
        {
            "torch": [_release_data(r) for r in k.releases],
            "cuda": [_toolkit_data(t) for t in k.toolkits],
        },
    )


def torch_view(k: Knowledge, minor: str, platform: str, python: str | None) -> View:
    release = k.release(minor) or k.release(".".join(minor.split(".")[:2]))
    if release is None:
        known = ", ".join(r.minor for r in k.releases)
        raise InputError(f"torch {minor} is not in the knowledge (known: {known})")
    py = PythonVersion.parse(python) if python else max(release.pythons)
    facts = Section(
        f"torch {release.minor}",
        ["fact", "value"],
        [
            ["PyPI CUDA (linux-64)", str(release.pypi_cuda)],
            ["PyPI aarch64 wheel", str(release.pypi_aarch64 or "cpu")],
            ["PyTorch index variants", " ".join(release.index_variants) + " cpu"],
            ["Python", " ".join(map(str, release.pythons))],
            ["manylinux / min glibc", f"{release.manylinux} / {release.min_glibc}"],
            ["C++11 ABI (PyPI)", str(release.cxx11_abi)],
            ["source", f"{release.source} ({release.origin})"],
        ],
    )
    variants = Section(
        "variants", ["variant", "from", "CUDA", "min driver", "max gcc", "GPU archs"]
    )
    variant_data = []
    pypi_cuda = release.pypi_cuda_for(platform)
    offered = ([(pypi_cuda, "PyPI")] if pypi_cuda else []) + [
        (CudaVersion.from_variant(v), "PyTorch index")
        for v in release.index_variants_for(platform)
        if CudaVersion.from_variant(v) != pypi_cuda
    ]
    for cuda, where in offered:
        toolkit = k.toolkit(cuda)
        row = k.arch_row(cuda.variant, f"{release.minor}.0", platform)
        variants.rows.append(
            [
                cuda.variant,
                where,
                str(cuda),
                str(toolkit.min_driver) if toolkit else "?",
                toolkit.max_gcc if toolkit else "?",
                _archs(row.archs) if row else "?",
            ]
        )
        variant_data.append(
            {
                "variant": cuda.variant,
                "from": where,
                "cuda": str(cuda),
                "min_driver": str(toolkit.min_driver) if toolkit else None,
                "archs": [str(a) for a in row.archs] if row else None,
            }
        )
    patches = Section(
        f"PyPI patch releases (pins evaluated for {platform}, Python {py})",
        ["torch", "requires-python", "cuDNN", "NCCL", "triton", "row"],
    )
    patch_data = []
    target = Target(platform, py, "2.28", CudaRequest("none"))
    for patch in k.patches_matching(SpecifierSet(f"=={release.minor}.*")):
        pins = {
            r.name: str(r.specifier) for r in patch.requirements_for(target.marker_environment())
        }
        patches.rows.append(
            [
                patch.version,
                str(patch.requires_python),
                _pin(pins, "nvidia-cudnn"),
                _pin(pins, "nvidia-nccl"),
                _pin(pins, "triton"),
                patch.origin,
            ]
        )
        patch_data.append(
            {
                "version": patch.version,
                "requires_python": str(patch.requires_python),
                "requires": [str(r) for r in patch.requires],
                "source": patch.source,
                "origin": patch.origin,
            }
        )
    data = _release_data(release) | {"variants": variant_data, "patches": patch_data}
    return View([facts, variants, patches], data)


def cuda_view(k: Knowledge, version: str, platform: str) -> View:
    try:
        cuda = CudaVersion.parse(version)
    except ValueError as exc:
        raise InputError(str(exc), hint="e.g. lockguard constraints show cuda 12.1") from None
    toolkit = k.toolkit(cuda)
    if toolkit is None:
        known = ", ".join(str(t.version) for t in k.toolkits)
        raise InputError(f"CUDA {version} is not in the knowledge (known: {known})")
    glibc = max(("2.17", *[r.glibc for r in k.sysroots if r.cuda.contains(str(toolkit.version))]))
    target = Target(platform, PythonVersion(3, 11), glibc, CudaRequest("version", toolkit.version))
    specs, _facts = conda_specs(k, target, toolkit.version, toolkit, glibc)
    releases = [
        r.minor
        for r in k.releases
        if r.pypi_cuda == toolkit.version or toolkit.version.variant in r.index_variants
    ]
    facts = Section(
        f"CUDA {toolkit.version}",
        ["fact", "value"],
        [
            ["min driver (minor-version compatibility)", str(toolkit.min_driver)],
            ["GA driver", str(toolkit.ga_driver or "?")],
            ["newest host gcc nvcc accepts", toolkit.max_gcc],
            ["nvcc GPU architectures", _archs(toolkit.sm)],
            ["cuDNN majors", " ".join(map(str, toolkit.cudnn))],
            [f"conda specs ({platform}, python 3.11)", " ".join(specs)],
            ["torch releases with this variant", " ".join(releases) or "none"],
            ["source", f"{toolkit.source} ({toolkit.origin})"],
        ],
    )
    data = _toolkit_data(toolkit) | {
        "conda_specs": list(specs),
        "torch_releases": releases,
        "platform": platform,
    }
    return View([facts], data)


def _pin(pins: dict[str, str], prefix: str) -> str:
    found = [spec for name, spec in pins.items() if name.startswith(prefix)]
    return found[0] if found else "-"


def _release_data(r) -> dict:
    return {
        "minor": r.minor,
        "pypi_cuda": str(r.pypi_cuda),
        "pypi_aarch64": str(r.pypi_aarch64 or "cpu"),
        "index_variants": list(r.index_variants),
        "pythons": [str(p) for p in r.pythons],
        "manylinux": r.manylinux,
        "min_glibc": r.min_glibc,
        "cxx11_abi": r.cxx11_abi,
        "source": r.source,
        "origin": r.origin,
    }


def _toolkit_data(t) -> dict:
    return {
        "version": str(t.version),
        "min_driver": str(t.min_driver),
        "ga_driver": str(t.ga_driver) if t.ga_driver else None,
        "max_gcc": t.max_gcc,
        "sm": [str(a) for a in t.sm],
        "cudnn": list(t.cudnn),
        "source": t.source,
        "origin": t.origin,
    }
