"""What pip will write for each incoming wheel, as paths relative to the prefix, so that any file
already there moves into the quarantine first (pip then never writes over a file it did not
create) and the run knows every path it adds. Pure: the wheels' member lists are read by io/env.

The mapping is pip's (and the wheel spec's): members go to purelib or platlib (Root-Is-Purelib),
`<name>.data/<scheme>/` members to that scheme's folder, entry points become scripts, every .py
under a lib folder gets a __pycache__/<stem>.<cache tag>.pyc, and pip adds INSTALLER, REQUESTED
and direct_url.json to the .dist-info folder."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from lockguard.install.inventory import QuarantineItem
from lockguard.install.plan import Plan

_PIP_ADDS = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


@dataclass(frozen=True)
class WheelContents:
    name: str  # canonical
    version: str
    filename: str
    members: tuple[str, ...]  # archive member names
    purelib: bool  # Root-Is-Purelib
    scripts: tuple[str, ...] = ()  # console_scripts and gui_scripts names

    @property
    def dist_info(self) -> str | None:
        for member in self.members:
            top = member.split("/", 1)[0]
            if top.endswith(".dist-info"):
                return top
        return None


@dataclass(frozen=True)
class Scheme:
    """pip's install scheme of the target environment, relative to the prefix."""

    purelib: str
    platlib: str
    scripts: str
    data: str
    headers: str  # the folder that holds <name>/ for .data/headers
    cache_tag: str | None = None


def planned_paths(wheel: WheelContents, scheme: Scheme) -> list[str]:
    lib = scheme.purelib if wheel.purelib else scheme.platlib
    bases = {"purelib": scheme.purelib, "platlib": scheme.platlib, "scripts": scheme.scripts,
             "data": scheme.data, "headers": posixpath.join(scheme.headers, wheel.name)}
    out: list[str] = []
    for member in wheel.members:
        if member.endswith("/"):
            continue
        top, _, rest = member.partition("/")
        if top.endswith(".data") and rest:
            kind, _, sub = rest.partition("/")
            if kind not in bases or not sub:
                continue
            base, relative = bases[kind], sub
        else:
            base, relative = lib, member
        path = _inside(base, relative)
        if path is None:
            continue  # pip refuses such a wheel; nothing to plan
        out.append(path)
        if path.endswith(".py") and base in (scheme.purelib, scheme.platlib) and scheme.cache_tag:
            folder, name = posixpath.split(path)
            out.append(posixpath.join(folder, "__pycache__", f"{name[:-3]}.{scheme.cache_tag}.pyc"))
    info = wheel.dist_info
    if info:
        out += [posixpath.join(lib, info, name) for name in _PIP_ADDS]
    out += [posixpath.join(scheme.scripts, name) for name in wheel.scripts]
    return list(dict.fromkeys(out))


def _inside(base: str, relative: str) -> str | None:
    """The path, when it stays inside its scheme folder (pip refuses a wheel whose member does not)."""
    path = posixpath.normpath(posixpath.join(base, relative))
    root = posixpath.normpath(base)
    if path.startswith(("../", "/")) or path == ".." or (root != "." and not path.startswith(root + "/")):
        return None
    return path


def collisions(plan: Plan, wheels: list[WheelContents], scheme: Scheme, present: set[str]) -> list[QuarantineItem]:
    """Files that exist (`present`) where an incoming wheel writes and that are not moving already:
    they move into the quarantine too, so pip writes only new files and restore can put them back."""
    moving = {item.path for item in plan.moves()}
    out, seen = [], set()
    for wheel in wheels:
        for path in planned_paths(wheel, scheme):
            if path in present and path not in moving and path not in seen:
                seen.add(path)
                out.append(QuarantineItem(path, f"pip would write {wheel.name} {wheel.version}'s copy over it",
                                          plan.owners.get(path, "unowned"), "collision"))
    return out
