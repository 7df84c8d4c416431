"""The plan of a clean-install: which stale files move to quarantine (and why), which installed
distributions are outgoing (all their files move to quarantine before pip runs: pip never
uninstalls or overwrites anything), what pip installs, which conda records are installed, and what
is only reported (outside the prefix, or nothing lockguard changes). Pure: built from an Inventory
and the scan; printed by --dry-run, executed by the transaction."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from lockguard.install.inventory import Inventory, QuarantineItem
from lockguard.install.lock_diff import Outgoing
from lockguard.model.finding import Finding
from lockguard.model.prefix import PrefixSnapshot

# findings a clean-install fixes inside the prefix; the rest are reported only
FIXABLE = {"LG200", "LG201", "LG202", "LG203", "LG204", "LG210", "LG211", "LG212", "LG215", "LG216", "LG220",
           "LG230"}


@dataclass
class Plan:
    prefix: str
    python: str
    requirements: str
    quarantine: list[QuarantineItem] = field(default_factory=list)  # stale files
    outgoing: list[Outgoing] = field(default_factory=list)
    outgoing_files: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dist-info -> files that move
    install: list[str] = field(default_factory=list)  # name==version
    conda: list[str] = field(default_factory=list)
    reported: list[Finding] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict, repr=False)  # path -> owner, of what stays

    @property
    def changes_nothing(self) -> bool:
        return not (self.quarantine or self.outgoing or self.install or self.conda)

    def moves(self) -> list[QuarantineItem]:
        """Every file that moves into the quarantine before pip runs, each once."""
        out = list(self.quarantine)  # unique paths already (make_plan)
        seen = {item.path for item in out}
        for dist in self.outgoing:
            for path in self.outgoing_files.get(dist.dist_info, ()):
                if path not in seen:
                    seen.add(path)
                    out.append(QuarantineItem(path, f"{dist.name} {dist.version}: {dist.reason}", dist.name, "outgoing"))
        return out

    def to_dict(self) -> dict:
        return {
            "prefix": self.prefix, "python": self.python, "requirements": self.requirements,
            "quarantine": [{"path": q.path, "reason": q.reason, "owner": q.owner, "code": q.code} for q in self.quarantine],
            "outgoing": [{"name": o.name, "version": o.version, "reason": o.reason,
                          "files": len(self.outgoing_files.get(o.dist_info, ()))} for o in self.outgoing],
            "install": self.install, "conda": self.conda,
            "reported": [f.to_dict() for f in self.reported],
        }

    def text(self) -> str:
        lines = [f"plan for {self.prefix} (python {self.python})"]
        if self.changes_nothing:
            lines.append("  nothing to change: the environment matches the lock")
        if self.quarantine:
            lines.append(f"  quarantine {len(self.quarantine)} stale files (moved, never deleted; "
                         "`lockguard restore` undoes):")
            lines += [f"    {q.path}  ({q.reason})" for q in self.quarantine]
        if self.outgoing:
            lines.append(f"  take out {len(self.outgoing)} distributions (all their files move into the quarantine "
                         "before pip runs; pip uninstalls nothing):")
            lines += [f"    {o.name} {o.version}  ({o.reason}; {len(self.outgoing_files.get(o.dist_info, ()))} files)"
                      for o in self.outgoing]
        if self.install:
            lines.append(f"  install from {self.requirements} (pip --require-hashes --no-deps): " + ", ".join(self.install))
            lines.append("    (a file of a staying package that pip writes over is kept by a hard link and joins the quarantine)")
        if self.conda:
            lines.append("  conda records to install: " + ", ".join(self.conda))
        if self.reported:
            lines.append("  reported, never changed (warnings; they fail the run only with --strict):")
            lines += [f"    {f.code} {f.message}" + (f"\n      hint: {f.hint}" if f.hint else "") for f in self.reported]
        return "\n".join(lines) + "\n"


def make_plan(inventory: Inventory, snap: PrefixSnapshot, *, requirements: str) -> Plan:
    plan = Plan(snap.prefix, snap.python, requirements)
    seen: set[str] = set()
    for item in inventory.quarantine:
        if item.path not in seen:
            seen.add(item.path)
            plan.quarantine.append(item)
    leaving = {o.dist_info for o in inventory.outgoing}
    plan.outgoing = sorted({o.dist_info: o for o in inventory.outgoing}.values(), key=lambda o: (o.name, o.version))
    plan.owners = _kept_owners(snap, leaving)
    plan.outgoing_files = _outgoing_files(snap, leaving, plan.owners)
    plan.install = sorted(set(inventory.missing))
    plan.conda = sorted(set(inventory.conda_missing))
    plan.reported = [f for f in inventory.findings if f.code not in FIXABLE and f.severity != "info"]
    return plan


def _kept_owners(snap: PrefixSnapshot, leaving: set[str]) -> dict[str, str]:
    """path -> owner, for every path a staying distribution (or conda record) lists."""
    owners: dict[str, str] = {}
    for record in snap.conda:
        owners.update(dict.fromkeys((os.path.normpath(p) for p in record.files), f"{record.name} (conda)"))
    for dist in snap.dists:
        if dist.in_prefix and dist.dist_info not in leaving:
            for path in dist.paths:
                owners.setdefault(path, dist.name)
    return owners


def _outgoing_files(snap: PrefixSnapshot, leaving: set[str], kept: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """The files of each outgoing distribution that exist: its RECORD's and everything in its
    .dist-info folder; a path a staying distribution also lists stays where it is."""
    out: dict[str, tuple[str, ...]] = {}
    infos = {os.path.relpath(d.dist_info, snap.prefix) + "/": d.dist_info for d in snap.dists if d.dist_info in leaving}
    extra: dict[str, list[str]] = {info: [] for info in infos.values()}
    if infos:
        for path in snap.files:
            cut = path.find(".dist-info/")
            if cut > 0 and path[: cut + 11] in infos:
                extra[infos[path[: cut + 11]]].append(path)
    for dist in snap.dists:
        if dist.dist_info not in leaving:
            continue
        absent = set(dist.absent)
        files = [p for p in dist.paths if p not in absent and p not in kept and not _protected(p)]
        files += [p for p in extra.get(dist.dist_info, ()) if p not in kept]
        out[dist.dist_info] = tuple(dict.fromkeys(files))
    return out


_PYTHON = re.compile(r"^bin/python[0-9.]*$")


def _protected(path: str) -> bool:
    """What makes the prefix an environment never moves, whatever a RECORD claims."""
    return (path in ("pyvenv.cfg", "bin/activate") or path.startswith(("conda-meta/", ".lockguard/"))
            or bool(_PYTHON.match(path)))


def blocking(findings: list[Finding]) -> list[Finding]:
    """Findings that must be gone after an apply (otherwise: roll back, exit 5)."""
    return [f for f in findings if f.code in FIXABLE]
