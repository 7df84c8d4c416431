"""What the import smoke imports after an apply: torch when the lock has it, and the top-level
module of each of the intent's direct requirements that has one. Pure: read from the scan."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lockguard.model.names import canonical_name
from lockguard.model.prefix import InstalledDist, PrefixSnapshot

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EXTENSION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.(?:[A-Za-z0-9_.-]+\.)?(?:so|pyd)$")


def direct_names(requirements: tuple[str, ...] | list[str]) -> list[str]:
    """Canonical names of the intent's pip requirements ("torch==2.1.*" -> "torch")."""
    out = []
    for text in requirements:
        match = _NAME.match(text)
        if match:
            out.append(canonical_name(match.group(1)))
    return list(dict.fromkeys(out))


def top_level_modules(dist: InstalledDist, snap: PrefixSnapshot) -> list[str]:
    """Importable top-level names a distribution installs (packages, modules, extensions)."""
    sites = [s[len(snap.prefix) + 1 :] + "/" for s in snap.site_dirs]
    tops = set()
    for path in dist.paths:
        site = next((s for s in sites if path.startswith(s)), None)
        if site is None:
            continue
        head, sep, _rest = path[len(site) :].partition("/")
        if sep:
            if _MODULE.match(head) and head != "__pycache__":
                tops.add(head)
        elif head.endswith(".py") and _MODULE.match(head[:-3]):
            tops.add(head[:-3])
        else:
            match = _EXTENSION.match(head)
            if match:
                tops.add(match.group(1))
    return sorted(t for t in tops if not t.startswith("_") and t not in ("test", "tests"))


def smoke_modules(
    snap: PrefixSnapshot, locked: Mapping[str, str], direct: Sequence[str]
) -> list[str]:
    installed = {d.name: d for d in snap.dists if d.in_prefix}
    out = ["torch"] if "torch" in locked and "torch" in installed else []
    for name in direct:
        dist = installed.get(name)
        if dist is None or name not in locked:
            continue
        tops = top_level_modules(dist, snap)
        own = name.replace("-", "_")
        out += [own] if own in tops else tops[:3]
    return list(dict.fromkeys(out))
