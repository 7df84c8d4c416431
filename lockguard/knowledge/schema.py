"""What each table of each knowledge file must hold.

A field is (type, required, check): `check` turns the raw TOML value into a typed value or raises
ValueError with a readable reason. The loader reports a bad row with its file, line and key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from lockguard.model.names import NamedSpec, canonical_name
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Field:
    kind: type | tuple[type, ...]
    required: bool = True
    # the raw value (of `kind`, which the loader checks first) -> the typed value; each check takes
    # its own kind of value, which one parameter type cannot say (hence Any)
    check: Callable[[Any], object] | None = None
    attr: str | None = None  # the row attribute, when it differs from the key
    # `check` only validates (it is costly): the fast path skips it, keeps the raw value
    deep: bool = False


def _list_of(convert: Callable[[Any], _T]) -> Callable[[list[object]], tuple[_T, ...]]:
    def check(value: list[object]) -> tuple[_T, ...]:
        return tuple(convert(v) for v in value)

    return check


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _variant(value: str) -> str:
    if value != "cpu":
        CudaVersion.from_variant(value)
    return value


def _cuda_or_cpu(value: str) -> CudaVersion | None:
    return None if value == "cpu" else CudaVersion.parse(value)


def _glibc(value: str) -> str:
    major, _, minor = value.partition(".")
    if major != "2" or not minor.isdigit():
        raise ValueError(f"{value!r} is not a glibc version like 2.28")
    return value


def _mismatch_lists(value: dict[str, list[str]]) -> dict[int, tuple[CudaVersion, ...]]:
    return {
        int(major): tuple(CudaVersion.parse(v) for v in versions)
        for major, versions in value.items()
    }


def _component_versions(value: dict[str, object]) -> dict[str, tuple[str, ...]]:
    out = {}
    for key, versions in value.items():
        if not isinstance(versions, list) or not versions:
            raise ValueError(f"{key!r} must list at least one version")
        out[key] = tuple(str(Version(v)) for v in versions)
    return out


def _pins(value: dict[str, str]) -> dict[str, SpecifierSet]:
    return {version: SpecifierSet(spec) for version, spec in value.items()}


def _requirements(value: list[str]) -> tuple[str, ...]:
    # packaging's requirement parser (markers, tags: about 15 ms) only for `deep` fields, which the
    # fast check path (validate=False) never checks
    from packaging.requirements import Requirement

    for text in value:
        Requirement(text)  # raises InvalidRequirement with the reason
    return tuple(value)


def _wheel_names(value: list[object]) -> tuple[str, ...]:
    names = tuple(_str(v) for v in value)
    for name in names:
        if canonical_name(name) != name:
            raise ValueError(
                f"{name!r} is not a canonical wheel name (write {canonical_name(name)!r})"
            )
    if len(set(names)) != len(names):
        raise ValueError("names a wheel twice")
    return names


def _two_or_more(value: list[object]) -> tuple[str, ...]:
    names = _wheel_names(value)
    if len(names) < 2:
        raise ValueError("a path shared by fewer than two wheels is no clash")
    return names


def _project_name(value: str) -> str:
    if canonical_name(value) != value:
        raise ValueError(
            f"{value!r} is not a canonical project name (write {canonical_name(value)!r})"
        )
    return value


def _bounded_specifier(value: str) -> str:
    """A PEP 440 specifier with an upper bound: a row states what was read from released sdists,
    never what a future release will say."""
    spec = SpecifierSet(value)  # raises InvalidSpecifier with the reason
    if not any(s.operator in ("==", "===", "<", "<=", "~=") for s in spec):
        raise ValueError(
            "needs an upper bound (==, <= or <): a row covers only releases whose sdists were read"
        )
    return value


def _specifier(value: str) -> str:
    SpecifierSet(value)
    return value


def _non_empty(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty: every row cites where its fact comes from")
    return value


SOURCE = Field(str, check=_non_empty)
STRINGS = Field(list, check=_list_of(_str))

SCHEMA: dict[str, dict[str, dict[str, Field]]] = {
    "torch.toml": {
        "release": {
            "minor": Field(str),
            "pypi-cuda": Field(str, check=CudaVersion.parse),
            "pypi-aarch64": Field(str, check=_cuda_or_cpu),
            "index-variants": Field(list, check=_list_of(_variant)),
            "index-aarch64": Field(list, required=False, check=_list_of(_variant)),
            "pythons": Field(list, check=_list_of(PythonVersion.parse)),
            "manylinux": Field(str),
            "min-glibc": Field(str, check=_glibc),
            "cxx11-abi": Field(bool),
            "source": SOURCE,
        },
        "arch": {
            "variant": Field(str, check=_variant),
            "torch": Field(str, check=SpecifierSet),
            "platforms": Field(list, required=False, check=_list_of(_str)),
            "archs": Field(list, check=_list_of(GpuArch.parse)),
            "source": SOURCE,
        },
        "patch": {
            "version": Field(str),
            "requires-python": Field(str, check=SpecifierSet),
            "wheel": Field(str),
            "uploaded": Field(str, required=False),
            "requires": Field(list, check=_requirements, attr="requires_text", deep=True),
            "source": SOURCE,
        },
    },
    "cuda.toml": {
        "toolkit": {
            "version": Field(str, check=CudaVersion.parse),
            "min-driver": Field(str, check=DriverVersion.parse),
            "ga-driver": Field(str, required=False, check=DriverVersion.parse),
            "max-gcc": Field(int),
            "sm": Field(list, check=_list_of(GpuArch.parse)),
            "cudnn": Field(list),
            "source": SOURCE,
        },
    },
    "components.toml": {
        "cuda-release": {
            "cuda": Field(str, check=CudaVersion.parse),
            "updates": STRINGS,
            "versions": Field(dict, check=_component_versions, deep=True),
            "source": SOURCE,
        },
        "component-policy": {
            "component": Field(str),
            "newer-within-major": Field(bool),
            "why": Field(str),
            "source": SOURCE,
        },
    },
    "shared_files.toml": {
        "shared-files": {
            "wheels": Field(list, check=_two_or_more),
            "path": Field(str, check=_str),
            "source": SOURCE,
        },
        "separate-files": {"wheels": Field(list, check=_wheel_names), "source": SOURCE},
    },
    "conda.toml": {
        "cuda-specs": {"cuda": Field(str, check=SpecifierSet), "specs": STRINGS, "source": SOURCE},
        "build-specs": {"platforms": STRINGS, "specs": STRINGS, "source": SOURCE},
        "python-specs": {"specs": STRINGS, "source": SOURCE},
        "sysroot": {
            "glibc": Field(str, check=_glibc),
            "cuda": Field(str, check=SpecifierSet),
            "source": SOURCE,
        },
        "library": {"conda": Field(str), "pypi": STRINGS, "source": SOURCE},
        "python-name": {"conda": Field(str), "pypi": Field(str), "source": SOURCE},
    },
    "extensions.toml": {
        "nvcc-rule": {
            "package": Field(str),
            "rule": Field(str),
            "minor-mismatch-ok": Field(dict, check=_mismatch_lists),
            "override-env": Field(str, required=False),
            "source": SOURCE,
        },
        "gpu-rule": {
            "package": Field(str),
            "min-arch": Field(str, check=GpuArch.parse),
            "min-cuda": Field(str, check=CudaVersion.parse),
            "min-torch": Field(str),
            "why": Field(str),
            "source": SOURCE,
        },
        "torch-pin": {"package": Field(str), "pins": Field(dict, check=_pins), "source": SOURCE},
    },
    "hazards.toml": {
        "hazard": {
            "id": Field(str),
            "when": Field(str, check=NamedSpec.parse),
            "platforms": STRINGS,
            "constrain": Field(str, check=NamedSpec.parse),
            "why": Field(str),
            "source": SOURCE,
        },
    },
    "sdist_metadata.toml": {
        "sdist-metadata": {
            "name": Field(str, check=_project_name),
            "versions": Field(str, check=_bounded_specifier, attr="versions_text", deep=True),
            "requires-dist": Field(list, check=_requirements, deep=True),
            "requires-python": Field(str, required=False, check=_specifier, deep=True),
            "source": SOURCE,
        },
    },
}
