"""A legacy develop install (`setup.py develop`, `pip install -e` before PEP 660): NAME.egg-link
in site-packages and a line of easy-install.pth naming the project's folder, whose .egg-info lies
outside the prefix. It imports like an installed package, and no lock installed it: it is reported
as not in the lock (LG202), and clean-install moves the .egg-link into the quarantine, with
easy-install.pth when every folder it adds is such a project's (restore brings both back).

Pure."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.names import canonical_name
from lockguard.model.prefix import PrefixSnapshot, relative_path


@dataclass
class EggLinks:
    findings: list[Finding] = field(default_factory=list)
    moves: list[tuple[str, str, str]] = field(default_factory=list)  # (path, why, code)
    pth: set[str] = field(default_factory=set)  # easy-install.pth files that move with them


def legacy_develop(snap: PrefixSnapshot, sites: list[str]) -> EggLinks:
    """Findings and moves of every .egg-link in a site folder of the prefix."""
    out = EggLinks()
    links: dict[str, list[str]] = {}  # site (relative) -> its .egg-link files
    for path in snap.files:
        if path.endswith(".egg-link"):
            site = next(
                (s for s in sites if path.startswith(s) and "/" not in path[len(s) :]), None
            )
            if site is not None:
                links.setdefault(site, []).append(path)
    for site, paths in sorted(links.items()):
        pth = next(
            (
                p
                for p in snap.pth
                if relative_path(p.path, snap.prefix) == site + "easy-install.pth"
            ),
            None,
        )
        projects: set[str] = set()
        for path in sorted(paths):
            stem = canonical_name(path[len(site) : -len(".egg-link")])
            dist = next(
                (
                    d
                    for d in snap.dists
                    if not d.in_prefix and d.name == stem and pth and d.site in pth.injected
                ),
                None,
            )
            if dist is not None:
                projects.add(dist.site)
            elif pth is not None and len(pth.injected) == 1 and len(paths) == 1:
                projects.add(pth.injected[0])  # setuptools writes one line per develop install
            version = f" {dist.version}" if dist else ""
            where = f" from {dist.site}" if dist else ""
            out.findings.append(
                codes.NOT_IN_LOCK.finding(
                    f"{stem}{version} is installed but not in the lock (a legacy develop install"
                    f"{where}: {path.rsplit('/', 1)[-1]})",
                    "it imports like an installed package; clean-install moves its .egg-link "
                    "(and easy-install.pth) into the quarantine; reinstall it with "
                    "`pip install -e` (PEP 660) or add it to the lock if it belongs there",
                    os.path.join(snap.prefix, path),
                )
            )
            out.moves.append((path, "a legacy develop install (.egg-link)", codes.NOT_IN_LOCK.code))
        if pth is not None and projects and set(pth.injected) <= projects:
            out.moves.append(
                (
                    site + "easy-install.pth",
                    "it adds only legacy develop installs to sys.path",
                    codes.NOT_IN_LOCK.code,
                )
            )
            out.pth.add(site + "easy-install.pth")
    return out
