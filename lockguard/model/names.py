"""Cheap text forms of package names and requirements, for the fast `lockguard check` path (which
must not import packaging's requirement parser: it costs more than Python's whole start-up)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

# pip-sync's rule: kept unless the lock pins them
INSTALLER_TOOLS = frozenset({"pip", "setuptools", "wheel"})
INTENT = "-r intent"  # the `via` of a top-level requirement; files print it as "-r lockguard.toml"
_SEPARATORS = re.compile(r"[-_.]+")
_HEAD = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$", re.S)


_CUDA_FAMILY = re.compile(r"^nvidia-[a-z0-9-]+-cu(\d{2})$")


def cuda_family(name: str) -> str | None:
    """The CUDA major of an nvidia wheel by its name: nvidia-nccl-cu12 -> "12" (None: not one)."""
    match = _CUDA_FAMILY.match(name)
    return match.group(1) if match else None


def same_version(a: str, b: str) -> bool:
    """PEP 440 equality (2.1.0 == 2.1), falling back to text for versions PEP 440 cannot read."""
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


_CONDA_SPEC = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")


def spec_name(spec: str) -> str:
    """The package name of a conda MatchSpec: "conda-forge::cuda-nvcc 12.1.*" -> "cuda-nvcc"."""
    match = _CONDA_SPEC.match(spec.split("::")[-1])
    return match.group(1) if match else spec


def canonical_name(name: str) -> str:
    """PEP 503 normalization: Foo_Bar.baz -> foo-bar-baz."""
    return _SEPARATORS.sub("-", name).lower()


def requirement_name(text: str) -> str:
    """The canonical project name of a PEP 508 requirement's text, without parsing it whole."""
    match = _HEAD.match(text.partition(";")[0])
    return canonical_name(match.group(1)) if match else canonical_name(text.strip())


def canonical_requirement_text(text: str) -> str:
    """A spelling-independent text of a PEP 508 requirement, without parsing it: the name
    normalized, extras and specifier clauses sorted, whitespace and quotes normalized. Two texts
    with the same meaning but different spellings map to one string (the intent hash relies on it);
    texts that differ in meaning never do."""
    head, _, marker = text.partition(";")
    match = _HEAD.match(head)
    if not match:
        return " ".join(text.split())
    name, extras, rest = match.groups()
    out = canonical_name(name)
    if extras:
        out += (
            "["
            + ",".join(
                sorted(canonical_name(e.strip()) for e in extras[1:-1].split(",") if e.strip())
            )
            + "]"
        )
    rest = rest.strip()
    if rest.startswith("@"):
        out += " @ " + rest[1:].strip()
    else:
        rest = "".join(rest.split()).strip("()")
        out += ",".join(sorted(part for part in rest.split(",") if part))
    if marker.strip():
        out += " ; " + " ".join(marker.replace("'", '"').split())
    return out


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class NamedSpec:
    """`torch<2.3`: a name and a version specifier, parsed without packaging's requirement
    parser."""

    name: str
    spec: str

    @classmethod
    def parse(cls, text: str) -> NamedSpec:
        match = _HEAD.match(text)
        if not match or match.group(2) or ";" in text:
            raise ValueError(f"{text!r} is not 'name' followed by a version specifier")
        return cls(canonical_name(match.group(1)), "".join(match.group(3).split()))

    @cached_property
    def specifier(self) -> SpecifierSet:
        """packaging's SpecifierSet (the resolver builds requirements from it)."""
        return SpecifierSet(self.spec)

    def contains(self, version: str) -> bool:
        """Does `version` meet the specifier (pre-releases included)?"""
        return self.specifier.contains(version, prereleases=True)

    def __str__(self) -> str:
        return f"{self.name}{self.spec}"


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known project names closest to a name no index has (`transformerz` -> transformers),
    compared in canonical form, best first; the name itself is never one of them."""
    import difflib

    wanted = canonical_name(name)
    choices = sorted({canonical_name(k) for k in known} - {wanted})
    return difflib.get_close_matches(wanted, choices, n=n, cutoff=0.8)
