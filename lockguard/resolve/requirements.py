"""Requirements as the provider tracks them: who asked, and whether it is only a constraint."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

PYTHON = "python"  # the virtual package standing for the target's interpreter (Requires-Python)


@cache
def parse_requirement(text: str) -> Requirement:
    """packaging's Requirement, parsed once per text: the provider, the speculator and the
    metadata check read the same Requires-Dist lines (a resolve parses ~1,200; half repeat).
    Callers must not change the object. InvalidRequirement is raised (and not kept) as before."""
    return Requirement(text)


@dataclass(frozen=True, slots=True)
class Req:
    name: str  # canonical
    specifier: SpecifierSet = field(default_factory=SpecifierSet)
    extras: frozenset[str] = frozenset()
    url: str | None = None
    parent: str | None = None  # "name==version" of the candidate that asked; None: the intent
    constraint_only: bool = False  # knowledge constraints bound a version but install nothing
    why: str | None = None  # the knowledge rule behind a constraint (id and origin)
    local: str | None = None  # the local version label a candidate must carry ("": none); None: any
    by: str | None = None  # who asks, in explanations, when it is not the parent (a knowledge rule)

    @classmethod
    def parse(cls, text: str, parent: str | None = None) -> Req:
        req = parse_requirement(text)
        return cls(
            canonicalize_name(req.name),
            req.specifier,
            frozenset(canonicalize_name(e) for e in req.extras),
            req.url,
            parent,
        )

    @property
    def key(self) -> str:
        return f"{self.name}[{','.join(sorted(self.extras))}]" if self.extras else self.name

    def __str__(self) -> str:
        text = self.key + (f" @ {self.url}" if self.url else str(self.specifier))
        return text + (f" ({self.why})" if self.why else "")


def fact(req: Req, who: str) -> str:
    """'the intent needs torch==2.2.*' /
    'knowledge (flash-attn GPU rule) allows no flash-attn [...]'."""
    if str(req.specifier) == "<0":
        text = f"{who} allows no {req.key}"
    else:
        what = (
            f"Python {req.specifier}" if req.name == PYTHON else f"{req.key}{req.specifier or ''}"
        )
        if req.local is not None:
            what += f" ({'PyPI build' if req.local == '' else '+' + req.local + ' build'})"
        text = f"{who} needs {what}"
    return text + (f" [{req.why}]" if req.why else "")


def split_key(identifier: str) -> tuple[str, frozenset[str]]:
    if "[" in identifier:
        name, _, rest = identifier.partition("[")
        return name, frozenset(rest.rstrip("]").split(","))
    return identifier, frozenset()


def exact_version(specifier: SpecifierSet) -> str | None:
    items = list(specifier)
    if (
        len(items) == 1
        and items[0].operator in ("==", "===")
        and not items[0].version.endswith(".*")
    ):
        return items[0].version
    return None
