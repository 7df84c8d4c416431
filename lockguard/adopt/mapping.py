"""Facts from existing files -> the values of an intent, each with a note naming where it came from.

Pure. Two files that disagree (the Dockerfile says CUDA 12.1, environment.yml says cudatoolkit
11.8) are a contradiction: reported with both origins, decided only by the user (`--cuda`,
`--python`). Where no file says anything, the value written says so in its comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from lockguard.adopt.facts import (
    CHANNEL,
    CONDA,
    CUDA,
    ENV_NAME,
    EXTRA_INDEX,
    GLIBC,
    INDEX,
    PIP,
    PYTHON,
    PYTORCH_INDEX,
    REQUIRES_PYTHON,
    Fact,
    SourceFacts,
)
from lockguard.adopt.requirements_file import TORCH_FAMILY
from lockguard.model.intent import DEFAULT_INDEXES
from lockguard.model.json_types import JsonObject
from lockguard.model.names import canonical_name, canonical_requirement_text

PYTHONS = tuple(f"3.{minor}" for minor in range(8, 15))
USABLE = (PYTHON, CUDA, PIP, CONDA, CHANNEL, GLIBC, REQUIRES_PYTHON)


@dataclass(frozen=True, slots=True)
class Contradiction:
    key: str
    facts: tuple[Fact, ...]
    hint: str

    def __str__(self) -> str:
        said = "; ".join(
            f"{f.origin} says {f.value}" + (f" ({f.why})" if f.why else "") for f in self.facts
        )
        return f"{self.key}: {said}"


@dataclass(frozen=True, slots=True)
class Undecided:
    """A choice no source makes and lockguard must not guess (which CUDA build of torch)."""

    key: str
    facts: tuple[Fact, ...]
    hint: str

    def __str__(self) -> str:
        asked = "; ".join(f"{f.origin} asks for {f.value}" for f in self.facts)
        return f"{self.key}: {asked}, and no file says which {self.key.upper()} build"


@dataclass
class Adopted:
    values: JsonObject = field(default_factory=dict)
    notes: JsonObject = field(
        default_factory=dict
    )  # key -> comment (scalar) or list of comments (list)
    contradictions: list[Contradiction] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # choices made, said on stderr

    @property
    def ok(self) -> bool:
        return not self.contradictions and not self.undecided


def usable(facts: SourceFacts) -> bool:
    return any(f.key in USABLE for f in facts.facts)


def adopt(
    facts: SourceFacts,
    *,
    python: str | None = None,
    cuda: str | None = None,
    indexes: tuple[str, ...] = (),
    running_python: str = "3.11",
) -> Adopted:
    """The intent values that `facts` give; `python`/`cuda`/`indexes` are the user's choices."""
    out = Adopted()
    _python(facts, python, running_python, out)
    _cuda(facts, cuda, out)
    _single(
        facts,
        GLIBC,
        out,
        "glibc",
        hint="edit the files so that they agree, or set glibc in the intent",
    )
    _single(
        facts,
        ENV_NAME,
        out,
        "name",
        hint="edit the files so that they agree, or set name in the intent",
    )
    _channels_and_conda(facts, out)
    _pip(facts, out)
    _indexes(facts, indexes, out)
    _single(
        facts,
        PYTORCH_INDEX,
        out,
        "pytorch-index",
        hint="edit the files so that they use one PyTorch index",
    )
    return out


def _distinct(found: list[Fact]) -> dict[str, list[Fact]]:
    by_value: dict[str, list[Fact]] = {}
    for fact in found:
        by_value.setdefault(fact.value, []).append(fact)
    return by_value


def _note(found: list[Fact]) -> str:
    notes = list(dict.fromkeys(f.note for f in found))
    return "; ".join(notes[:3]) + (f"; and {len(notes) - 3} more" if len(notes) > 3 else "")


def _chosen(key: str, value: str, flag: str, found: list[Fact], out: Adopted) -> None:
    out.values[key] = value
    others = [f for f in found if f.value != value]
    agreeing = [f for f in found if f.value == value]
    out.notes[key] = f"{flag} {value}" + (f"; also {_note(agreeing)}" if agreeing else "")
    if others:
        out.notes[key] += f"; chosen over {_note(others)}"
        out.messages.append(f"{key} = {value} ({flag}), chosen over: {_note(others)}")


def _python(facts: SourceFacts, chosen: str | None, running: str, out: Adopted) -> None:
    found = facts.of(PYTHON)
    bounds = facts.of(REQUIRES_PYTHON)
    if chosen:
        _chosen("python", chosen, "--python", found, out)
    else:
        decided = _single(facts, PYTHON, out, "python", hint="choose one with --python X.Y")
        if decided == "conflict":
            return
        if decided is None and bounds:
            allowed = [v for v in PYTHONS if _allows(bounds, v)]
            if not allowed:
                out.contradictions.append(
                    Contradiction(
                        "python",
                        tuple(bounds),
                        "no Python 3.8-3.14 satisfies it: choose one with --python X.Y",
                    )
                )
                return
            out.values["python"] = allowed[0]
            out.notes["python"] = f"the oldest Python that {_note(bounds)} allows"
            out.messages.append(
                f"python = {allowed[0]}: no source names one; "
                f"the oldest that {_note(bounds)} allows "
                "(pass --python to choose another)"
            )
        elif decided is None:
            out.values["python"] = running
            out.notes["python"] = "no source names a Python: the running interpreter's"
            out.messages.append(
                f"python = {running}: no source names one, so the running interpreter's "
                "(pass --python to choose another)"
            )
    outside = [b for b in bounds if not _allows([b], out.values["python"])]
    if outside:
        out.contradictions.append(
            Contradiction(
                "python",
                tuple(outside) + tuple(f for f in found if f.value == out.values["python"]),
                f"Python {out.values['python']} is outside requires-python: "
                "choose one with --python X.Y",
            )
        )


def _allows(bounds: list[Fact], version: str) -> bool:
    for bound in bounds:
        try:
            if not SpecifierSet(bound.value).contains(f"{version}.0", prereleases=True):
                return False
        except InvalidSpecifier:
            continue
    return True


def _cuda(facts: SourceFacts, chosen: str | None, out: Adopted) -> None:
    found = facts.of(CUDA)
    if chosen:
        _chosen("cuda", chosen, "--cuda", found, out)
        return
    if _single(facts, CUDA, out, "cuda", hint="choose one with --cuda X.Y (or --cuda none)"):
        return
    torch = [f for f in facts.of(PIP) if _name_of(f.value) in TORCH_FAMILY]
    if torch:
        out.undecided.append(
            Undecided(
                "cuda",
                tuple(torch[:1]),
                "choose the CUDA build of torch with --cuda X.Y (or --cuda none for CPU)",
            )
        )
        return
    out.values["cuda"] = "none"
    out.notes["cuda"] = "no source names a CUDA version: CPU only"


def _single(facts: SourceFacts, key: str, out: Adopted, name: str, *, hint: str) -> str | None:
    """The one value the sources agree on ("set"), a contradiction when they name several
    ("conflict"), or None when none names it."""
    found = facts.of(key)
    by_value = _distinct(found)
    if len(by_value) > 1:
        out.contradictions.append(Contradiction(name, tuple(found), hint))
        return "conflict"
    if by_value:
        value, origins = next(iter(by_value.items()))
        out.values[name], out.notes[name] = value, _note(origins)
        return "set"
    return None


def _channels_and_conda(facts: SourceFacts, out: Adopted) -> None:
    channels = _distinct(facts.of(CHANNEL))
    conda = _distinct(facts.of(CONDA))
    by_name: dict[str, list[Fact]] = {}
    for text, origins in conda.items():
        by_name.setdefault(text.split()[0].split("=")[0].split("<")[0].split(">")[0], []).extend(
            origins
        )
    for name, origins in by_name.items():
        if len(_distinct(origins)) > 1:
            out.contradictions.append(
                Contradiction(
                    f"conda {name}",
                    tuple(origins),
                    "edit the files so that they ask for one version",
                )
            )
    if channels:
        out.values["channels"] = list(channels)
        out.notes["channels"] = [_note(v) for v in channels.values()]
    elif not conda:
        out.values["channels"] = []
        out.notes["channels"] = (
            "no conda environment among the files: a pip-only lock (requirements.lock)"
        )
    if conda:
        out.values["conda"] = list(conda)
        out.notes["conda"] = [_note(v) for v in conda.values()]


def _pip(facts: SourceFacts, out: Adopted) -> None:
    texts: dict[str, list[Fact]] = {}
    for fact in facts.of(PIP):
        texts.setdefault(canonical_requirement_text(fact.value), []).append(fact)
    exact: dict[str, list[Fact]] = {}
    versions: dict[str, set[str]] = {}
    for origins in texts.values():
        pinned = _exact_pin(origins[0].value)
        if pinned:
            exact.setdefault(pinned[0], []).append(origins[0])
            versions.setdefault(pinned[0], set()).add(pinned[1])
    for name, origins in exact.items():
        if len(versions[name]) > 1:
            out.contradictions.append(
                Contradiction(
                    f"pip {name}", tuple(origins), "edit the files so that they pin one version"
                )
            )
    out.values["pip"] = [origins[0].value for origins in texts.values()]
    out.notes["pip"] = [_note(origins) for origins in texts.values()]


def _name_of(text: str) -> str | None:
    try:
        return canonical_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _exact_pin(text: str) -> tuple[str, str] | None:
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    versions = [
        s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version
    ]
    return (canonical_name(req.name), versions[0]) if versions else None


def _indexes(facts: SourceFacts, chosen: tuple[str, ...], out: Adopted) -> None:
    if chosen:
        out.values["indexes"] = list(chosen)
        out.notes["indexes"] = ["--index" for _ in chosen]
        return
    primary = _distinct(facts.of(INDEX))
    if len(primary) > 1:
        out.contradictions.append(
            Contradiction(
                "indexes",
                tuple(facts.of(INDEX)),
                "edit the files so that they use one --index-url, or pass --index",
            )
        )
        return
    extras = _distinct(facts.of(EXTRA_INDEX))
    if not primary and not extras:
        return
    urls = list(primary) or list(DEFAULT_INDEXES)
    notes = [_note(v) for v in primary.values()] or ["pip's default index"]
    for url, origins in extras.items():
        if url not in urls:
            urls.append(url)
            notes.append(_note(origins))
    out.values["indexes"], out.notes["indexes"] = urls, notes
