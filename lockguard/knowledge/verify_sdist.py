"""Compare constraints/sdist_metadata.toml with what the sdists on the index say now. Pure: the
reading is io/index/sdist_pkg_info.py's.

An sdist's PKG-INFO lists Requires-Dist from setuptools 68-ish on (Metadata-Version 2.2+, marked
Dynamic when setup.py computes them, but written from what setup.py said when the sdist was made);
older ones leave them out, and then the `<name>.egg-info/requires.txt` setuptools wrote into the
same sdist holds them. A PKG-INFO of Metadata-Version 2.2+ that lists none and does not mark them
Dynamic says there are none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.parser import HeaderParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from lockguard.knowledge.sdist_metadata import SdistMetadata, SdistMetadataRow
from lockguard.knowledge.verify import Difference


@dataclass(frozen=True, slots=True)
class SdistFacts:
    """What one sdist on the index says of its dependencies."""

    version: str
    filename: str
    requires_dist: tuple[str, ...] | None  # None: not said where it was read (an old PKG-INFO)
    requires_python: str | None
    read_from: str  # "PKG-INFO" or "egg-info/requires.txt"


def pkg_info_facts(version: str, filename: str, pkg_info: bytes) -> SdistFacts:
    message = HeaderParser().parsestr(pkg_info.decode("utf-8", errors="replace"))
    listed = tuple(message.get_all("Requires-Dist") or ())
    dynamic = {d.strip().lower() for d in message.get_all("Dynamic") or ()}
    says_none = (
        _metadata_version(message.get("Metadata-Version", "1.0")) >= (2, 2)
        and "requires-dist" not in dynamic
    )
    return SdistFacts(
        version,
        filename,
        listed if listed or says_none else None,
        message.get("Requires-Python"),
        "PKG-INFO",
    )


def requires_txt_facts(facts: SdistFacts, text: str) -> SdistFacts:
    """The same sdist, its Requires-Dist read from setuptools' egg-info/requires.txt."""
    return SdistFacts(
        facts.version,
        facts.filename,
        requires_from_txt(text),
        facts.requires_python,
        "egg-info/requires.txt",
    )


def requires_from_txt(text: str) -> tuple[str, ...]:
    """setuptools' requires.txt as Requires-Dist: plain lines, then sections `[extra]`,
    `[:marker]` or `[extra:marker]` whose lines hold under that extra and marker."""
    out = []
    extra, marker = "", ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, marker = line[1:-1].partition(":")
            continue
        conditions = [f"({marker})" if marker and extra else marker] if marker else []
        conditions += [f'extra == "{extra}"'] if extra else []
        out.append(f"{line}; {' and '.join(conditions)}" if conditions else line)
    return tuple(out)


def covered(row: SdistMetadataRow, facts: Sequence[SdistFacts]) -> list[SdistFacts]:
    return [f for f in facts if row.covers(f.version)]


def requires_txt_wanted(
    table: SdistMetadata, facts: Mapping[str, Sequence[SdistFacts] | None]
) -> list[SdistFacts]:
    """Per row, the newest covered sdist whose PKG-INFO does not list its Requires-Dist: its
    requires.txt is read (one whole sdist per row at most; the others are checked by PKG-INFO)."""
    out = []
    for row in table.rows:
        silent = [f for f in covered(row, facts.get(row.name) or ()) if f.requires_dist is None]
        if silent:
            out.append(max(silent, key=lambda f: Version(f.version)))
    return out


def sdist_metadata_differences(
    table: SdistMetadata, facts: Mapping[str, Sequence[SdistFacts] | None]
) -> list[Difference]:
    """`facts`: project name -> what each of its sdists on the index says (None: no such project).
    A row that covers no sdist on the index, and each covered sdist whose Requires-Dist or
    Requires-Python differ from the row."""
    out = []
    for row in table.rows:
        found = covered(row, facts.get(row.name) or ())
        if not found:
            out.append(
                Difference(
                    f"{row.name} {row.versions_text}",
                    "sdists",
                    "covered",
                    "no sdist on the index",
                    row.origin,
                )
            )
            continue
        for sdist in sorted(found, key=lambda f: Version(f.version)):
            where = f"{row.name} {sdist.version}"
            if sdist.requires_dist is not None and _requirements(
                sdist.requires_dist
            ) != _requirements(row.requires_dist):
                out.append(
                    Difference(
                        where,
                        f"requires-dist ({sdist.read_from})",
                        _listed(row.requires_dist),
                        _listed(sdist.requires_dist),
                        row.origin,
                    )
                )
            if row.requires_python is not None and _python(sdist.requires_python) != _python(
                row.requires_python
            ):
                out.append(
                    Difference(
                        where,
                        "requires-python (PKG-INFO)",
                        row.requires_python,
                        sdist.requires_python or "(absent)",
                        row.origin,
                    )
                )
    return out


def _requirements(texts: Sequence[str]) -> frozenset[tuple[object, ...]]:
    """A spelling-independent set: canonical names, sorted extras and specifiers, normalized
    markers."""
    out: set[tuple[object, ...]] = set()
    for text in texts:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            out.add(("unparsable", text))
            continue
        out.add(
            (
                canonicalize_name(req.name),
                tuple(sorted(req.extras)),
                str(req.specifier),
                str(req.marker) if req.marker else "",
                req.url or "",
            )
        )
    return frozenset(out)


def _python(text: str | None) -> SpecifierSet | str | None:
    try:
        return SpecifierSet(text or "")
    except InvalidSpecifier:
        return text


def _listed(texts: Sequence[str]) -> str:
    return ", ".join(texts) if texts else "(none)"


def _metadata_version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in text.strip().split("."))
    except ValueError:
        return (1, 0)
