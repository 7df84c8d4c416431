"""Kept installer tools against the lock (LG221). pip, setuptools and wheel stay when the lock does
not pin them (pip-sync's rule); when one of them requires another version of a package the lock
pins (wheel 0.48.0 needs packaging>=24.0, the lock has packaging 23.2), the environment is
inconsistent (`pip check` fails) and the fix is to let the resolver choose the tool. Pure."""

from __future__ import annotations

import platform
from collections.abc import Mapping

from packaging.version import InvalidVersion, Version

from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.names import INSTALLER_TOOLS, canonical_name
from lockguard.model.prefix import PrefixSnapshot


def _marker_environment(python_version: str) -> dict[str, str]:
    parts = (python_version or platform.python_version()).split(".")
    return {
        "python_version": ".".join(parts[:2]),
        "python_full_version": ".".join(parts),
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "extra": "",
    }


def tool_conflicts(snap: PrefixSnapshot, locked: Mapping[str, str]) -> list[Finding]:
    kept = [
        d
        for d in snap.dists
        if d.in_prefix and d.name in INSTALLER_TOOLS and d.name not in locked and d.requires
    ]
    if not kept:
        return []  # nothing to read: packaging's requirement parser (a tenth of a scan) is not
    # imported here, not at the top, for that reason: most prefixes keep no installer tool the
    # lock leaves out
    from packaging.requirements import InvalidRequirement, Requirement

    environment = _marker_environment(snap.python_version)
    out = []
    for dist in kept:
        for text in dist.requires:
            try:
                requirement = Requirement(text)
                if requirement.marker is not None and not requirement.marker.evaluate(environment):
                    continue
                name = canonical_name(requirement.name)
                if name not in locked or requirement.specifier.contains(
                    Version(locked[name]), prereleases=True
                ):
                    continue
            except (InvalidRequirement, InvalidVersion, ValueError, TypeError):
                continue  # a requirement lockguard cannot read is pip's problem, not a conflict
            out.append(
                codes.KEPT_TOOL_CONFLICT.finding(
                    f"{dist.name} {dist.version} is kept (the lock does not pin it) and requires "
                    f"{requirement}, but the lock pins {name} {locked[name]}",
                    f"add `{dist.name}` to the intent's pip list and run `lockguard resolve`: "
                    "the resolver then picks a "
                    f"{dist.name} that accepts {name} {locked[name]} and clean-install installs it "
                    f"(or remove it: `python -m pip uninstall {dist.name}`)",
                    dist.dist_info,
                )
            )
    return out
