"""One distribution found twice. Pure.

LG213 on two sys.path entries: the first one wins; the finding names where the other copy comes
from (the user site, a PYTHONPATH entry, a .pth file, the base interpreter of a venv that sees its
packages) and the fix that applies there. A --system-site-packages venv's own site is the
environment: its copy of the very version the base interpreter also holds is not reported (the
base's copy only stands behind it), nor are the base's installer tools.
LG206 in one folder (two .dist-info): `pip install --ignore-installed` over another version. The
copy whose files are on disk is what imports (the scan compares the RECORDs' digests with the
files both list: InstalledDist.overwritten).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lockguard.install.lock_diff import twins
from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.names import INSTALLER_TOOLS, same_version
from lockguard.model.prefix import InstalledDist, PrefixSnapshot


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a sys.path entry comes from, and how a copy there stops shadowing or being shadowed."""

    kind: str  # environment | user site | PYTHONPATH | .pth | base interpreter | outside
    where: str  # the entry, named for a person
    fix: str  # what to do about a copy there (empty for the environment's own)


def on_two_paths(snap: PrefixSnapshot) -> list[Finding]:
    """LG213: one distribution in two sys.path entries (one copy per entry: two in one folder are
    LG206's)."""
    order = {p: i for i, p in reversed(list(enumerate(snap.real_sys_path or snap.sys_path)))}
    by_site: dict[tuple[str, str], InstalledDist] = {}
    for dist in snap.dists:
        held = by_site.get((dist.name, dist.site))
        if held is None or held.overwritten and not dist.overwritten:
            by_site[(dist.name, dist.site)] = dist
    by_name: dict[str, list[InstalledDist]] = {}
    for (name, _site), dist in by_site.items():
        by_name.setdefault(name, []).append(dist)
    out = []
    for name, copies in sorted(by_name.items()):
        if len(copies) < 2:
            continue
        copies.sort(key=lambda d: order.get(d.site, 1 << 30))
        origins = {d.site: origin(snap, d.site, name) for d in copies}
        foreign = [d for d in copies if origins[d.site].kind != "environment"]
        # pip, setuptools and wheel of the base interpreter are its own tools, not drift
        if name in INSTALLER_TOOLS and all(
            origins[d.site].kind == "base interpreter" for d in foreign
        ):
            continue
        winner, losers = copies[0], copies[1:]
        # a venv's own copy of the very version its base interpreter has: the venv's site is
        # the environment, the base's copy only stands behind it (a --system-site-packages venv
        # clean-installed from a lock that pins what the base holds)
        if winner not in foreign and all(
            origins[d.site].kind == "base interpreter" and same_version(d.version, winner.version)
            for d in losers
        ):
            continue
        where = ", ".join(f"{d.version} in {origins[d.site].where}" for d in losers)
        fixes = list(dict.fromkeys(origins[d.site].fix for d in foreign if origins[d.site].fix))
        out.append(
            codes.INSTALLED_TWICE.finding(
                f"{name} is installed twice on sys.path: {winner.version} in "
                f"{origins[winner.site].where} wins over {where}",
                "; ".join(fixes) or f"uninstall the extra copy of {name}",
                winner.dist_info,
            )
        )
    return out


def origin(snap: PrefixSnapshot, site: str, name: str) -> Origin:
    """Where the sys.path entry `site` (links resolved) comes from; the fix for a copy of `name`
    there."""
    if (site + os.sep).startswith(snap.prefix + os.sep):
        return Origin("environment", f"the environment's {site}", "")
    if snap.user_site and site == snap.user_site:
        version = ".".join(snap.python_version.split(".")[:2]) or "3"  # the user site's
        return Origin(
            "user site",
            f"the user site {site}",
            f"every Python {version} of this user sees the user site: remove the copy there "
            f"(`python{version} -m pip uninstall {name}` run outside any environment, where the "
            "user site comes first), or run this environment with PYTHONNOUSERSITE=1",
        )
    if site in snap.pythonpath:
        return Origin(
            "PYTHONPATH",
            f"the PYTHONPATH entry {site}",
            f"unset PYTHONPATH, or remove {site} from it",
        )
    pth = next((p for p in snap.pth if site in p.injected or site in p.existing), None)
    if pth is not None:
        return Origin(
            ".pth",
            f"{site} (added by {pth.path})",
            f"remove the line naming {site} from {pth.path} (or the .pth file, if it is a "
            "leftover)",
        )
    base = snap.base_prefix
    if base and base != snap.prefix and (site + os.sep).startswith(base + os.sep):
        return Origin(
            "base interpreter",
            f"the base interpreter's {site}",
            "this venv sees its base interpreter's packages (include-system-site-packages = "
            f"true in {snap.prefix}/pyvenv.cfg): set it to false to stop that, or keep "
            f"{name} in the environment only (lockguard never changes the base interpreter)",
        )
    return Origin("outside", f"{site}, outside the environment", "remove it from sys.path")


def in_one_folder(snap: PrefixSnapshot) -> list[Finding]:
    """LG206: two .dist-info of one distribution in one folder, naming the one that imports."""
    out = []
    for (site, name), copies in sorted(twins(snap.dists).items()):
        copies = sorted(copies, key=_dist_info)
        live = [d for d in copies if not d.overwritten]
        if len(live) == 1:
            left = ", ".join(
                f"{d.version} ({_folder(d)}) is left over, its files overwritten"
                for d in copies
                if d.overwritten
            )
            what = f"{live[0].version} ({_folder(live[0])}) is what imports; {left}"
        else:
            listed = ", ".join(f"{d.version} ({_folder(d)})" for d in copies)
            what = f"{listed}; their shared files do not tell which one imports"
        out.append(
            codes.TWO_DIST_INFOS.finding(
                f"{name} is installed twice in {site}: {what}",
                "`pip install --ignore-installed` writes a second copy over the first and leaves "
                "its .dist-info and files behind (pip uninstall would then remove files both "
                f"copies list); `lockguard clean-install` keeps the lock's {name} and "
                "quarantines the other copy's files",
                (live[0] if len(live) == 1 else copies[0]).dist_info,
            )
        )
    return out


def _dist_info(dist: InstalledDist) -> str:
    return dist.dist_info


def _folder(dist: InstalledDist) -> str:
    return os.path.basename(dist.dist_info)
