"""The plan of a clean-install: which stale files move to quarantine (and why), which installed
distributions are outgoing (all their files move to quarantine before pip runs: pip never
uninstalls or overwrites anything), what pip installs, which conda records are installed, and what
is only reported (outside the prefix, or nothing lockguard changes). Pure: built from an Inventory
and the scan; printed by --dry-run, executed by the transaction."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lockguard.install.inventory import Inventory, QuarantineItem
from lockguard.install.lock_diff import Outgoing
from lockguard.model import codes
from lockguard.model.finding import ERROR, Finding
from lockguard.model.json_types import JsonObject
from lockguard.model.prefix import PrefixSnapshot, relative_path
from lockguard.model.wording import counted, human_size

# a group of stale files this small is listed file by file without -v (a folder name alone hides
# which three files move)
FILES_NAMED = 3

# findings a clean-install fixes inside the prefix; the rest are reported only
FIXABLE = {
    codes.PACKAGE_MISSING.code,
    codes.OTHER_VERSION.code,
    codes.NOT_IN_LOCK.code,
    codes.FILE_DIFFERS.code,
    codes.RECORD_FILE_MISSING.code,
    codes.LEGACY_EGG_INFO.code,
    codes.TWO_DIST_INFOS.code,
    codes.UNOWNED_LIBRARY.code,
    codes.UNOWNED_FILE.code,
    codes.ORPHAN_FOLDER.code,
    codes.MIXED_CUDA_WHEELS.code,
    codes.DUPLICATE_SONAME.code,
    codes.SYMLINK_OUT.code,
    codes.ORPHAN_BYTECODE.code,
    codes.CONDA_RECORD_DIFFERS.code,
}


@dataclass
class Plan:
    prefix: str
    python: str
    requirements: str
    quarantine: list[QuarantineItem] = field(default_factory=list)  # stale files
    outgoing: list[Outgoing] = field(default_factory=list)
    # dist-info -> files that move
    outgoing_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    install: list[str] = field(default_factory=list)  # name==version
    conda: list[str] = field(default_factory=list)
    reported: list[Finding] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict, repr=False)  # path -> owner, of what stays
    sites: list[str] = field(default_factory=list)  # site-packages folders, relative to the prefix
    # from the caller's survey of the files (io/env/preflight.py): their sizes, and what cannot move
    sizes: dict[str, int] = field(default_factory=dict, repr=False)
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    installer: str = "uv"  # the engine that installs `install` (io/env/engines/)

    @property
    def changes_nothing(self) -> bool:
        return not (self.quarantine or self.outgoing or self.install or self.conda)

    @property
    def quarantine_folder(self) -> str:
        return f"{self.prefix}/.lockguard/quarantine/"

    def moves(self) -> list[QuarantineItem]:
        """Every file that moves into the quarantine before pip runs, each once."""
        out = list(self.quarantine)  # unique paths already (make_plan)
        seen = {item.path for item in out}
        for dist in self.outgoing:
            for path in self.outgoing_files.get(dist.dist_info, ()):
                if path not in seen:
                    seen.add(path)
                    out.append(
                        QuarantineItem(
                            path,
                            f"{dist.name} {dist.version}: {dist.reason}",
                            dist.name,
                            "outgoing",
                        )
                    )
        return out

    def size_of(self, paths: Iterable[str]) -> int:
        return sum(self.sizes.get(path, 0) for path in paths)

    def to_dict(self) -> JsonObject:
        moves = self.moves()
        return {
            "prefix": self.prefix,
            "python": self.python,
            "requirements": self.requirements,
            "installer": self.installer,
            "quarantine": [
                {
                    "path": q.path,
                    "reason": q.reason,
                    "owner": q.owner,
                    "code": q.code,
                    "bytes": self.sizes.get(q.path, 0),
                }
                for q in self.quarantine
            ],
            "outgoing": [
                {
                    "name": o.name,
                    "version": o.version,
                    "reason": o.reason,
                    "files": len(self.outgoing_files.get(o.dist_info, ())),
                    "bytes": self.size_of(self.outgoing_files.get(o.dist_info, ())),
                    **({"note": o.note} if o.note else {}),
                }
                for o in self.outgoing
            ],
            "install": self.install,
            "conda": self.conda,
            "reported": [f.to_dict() for f in self.reported],
            "quarantine_files": len(moves),
            "quarantine_bytes": self.size_of(m.path for m in moves),
            "quarantine_folder": self.quarantine_folder,
            "blocked": [{"path": path, "why": why} for path, why in self.blocked],
        }

    def text(self, *, verbose: bool = False) -> str:
        """The plan for a person: stale files grouped by folder and reason (every file with
        `verbose`), one distribution or package a line, sizes, where the quarantine lives."""
        lines = [f"plan for {self.prefix} (python {self.python})"]
        errors = [f for f in self.reported if f.severity == ERROR]
        if self.changes_nothing and errors:
            # the lock's packages are in place, but not "matches the lock": the run fails as
            # `check --env` does (one severity)
            lines.append(
                "  nothing to change: the lock's packages are installed, but "
                f"{counted(len(errors), 'error')} outside what a clean-install changes "
                f"{'remains' if len(errors) == 1 else 'remain'} (below)"
            )
        elif self.changes_nothing:
            lines.append("  nothing to change: the environment matches the lock")
        if self.blocked:
            lines.append(
                f"  cannot move {counted(len(self.blocked), 'file')} into the quarantine: "
                "the run stops before it changes anything:"
            )
            lines += [f"    {path}: {why}" for path, why in self.blocked[: None if verbose else 20]]
            if len(self.blocked) > 20 and not verbose:
                lines.append(f"    ... and {len(self.blocked) - 20} more (-v lists them)")
        if self.quarantine:
            lines.append(
                f"  quarantine {counted(len(self.quarantine), 'stale file')}, "
                f"{human_size(self.size_of(q.path for q in self.quarantine))} "
                "(moved, never deleted; `lockguard restore` undoes):"
            )
            for (folder, reason), items in self._stale_groups():
                size = human_size(self.size_of(q.path for q in items))
                lines.append(f"    {folder}  {counted(len(items), 'file')}, {size}: {reason}")
                if verbose or len(items) <= FILES_NAMED:
                    lines += [
                        f"      {q.path[len(folder) :]}  ({human_size(self.sizes.get(q.path, 0))})"
                        for q in items
                    ]
        if self.outgoing:
            lines.append(
                f"  take out {counted(len(self.outgoing), 'distribution')} (all their files move "
                "into the quarantine before the install runs; nothing is uninstalled):"
            )
            for o in self.outgoing:
                files = self.outgoing_files.get(o.dist_info, ())
                note = f"; {o.note}" if o.note else ""
                lines.append(
                    f"    {o.name} {o.version}  ({o.reason}; {counted(len(files), 'file')}, "
                    f"{human_size(self.size_of(files))}{note})"
                )
        if self.install:
            lines.append(
                f"  install {counted(len(self.install), 'package')} from {self.requirements} "
                f"with {self.installer} (--require-hashes --no-deps):"
            )
            lines += [f"    {pin}" for pin in self.install]
            lines.append(
                f"    (a file of a staying package that {self.installer} writes over is kept by a "
                "hard link and joins the quarantine)"
            )
        if self.conda:
            lines.append("  conda records to install with rattler:")
            lines += [f"    {name}" for name in self.conda]
        moves = self.moves()
        if moves:
            lines.append(
                f"  the quarantine will hold {counted(len(moves), 'file')}, "
                f"{human_size(self.size_of(m.path for m in moves))}, in {self.quarantine_folder} "
                "(`lockguard restore --prune` gives the space back once you no longer need to undo)"
            )
        if self.reported:
            lines.append(
                "  reported, never changed (outside what a clean-install changes; an error fails "
                "the run as `check --env` fails, a warning only with --strict):"
            )
            lines += [
                f"    {f.code} {f.severity}: {f.message}"
                + (f"\n      hint: {f.hint}" if f.hint else "")
                for f in self.reported
            ]
        return "\n".join(lines) + "\n"

    def _stale_groups(self) -> list[tuple[tuple[str, str], list[QuarantineItem]]]:
        """Stale files by (folder, reason): the folder two levels below site-packages (torch/lib/),
        else the file's own folder."""
        groups: dict[tuple[str, str], list[QuarantineItem]] = {}
        for item in self.quarantine:
            site = next((s for s in self.sites if item.path.startswith(s)), None)
            if site is not None:
                parts = item.path[len(site) :].split("/")[:-1][:2]
                folder = site + "".join(f"{part}/" for part in parts)
            else:
                folder = os.path.dirname(item.path) + "/" if "/" in item.path else ""
            groups.setdefault((folder, item.reason), []).append(item)
        return sorted(groups.items())


def make_plan(inventory: Inventory, snap: PrefixSnapshot, *, requirements: str) -> Plan:
    plan = Plan(snap.prefix, snap.python, requirements)
    plan.sites = [site[len(snap.prefix) + 1 :] + "/" for site in snap.site_dirs]
    seen: set[str] = set()
    for item in inventory.quarantine:
        if item.path not in seen:
            seen.add(item.path)
            plan.quarantine.append(item)
    leaving = {o.dist_info for o in inventory.outgoing}
    plan.outgoing = sorted(
        {o.dist_info: o for o in inventory.outgoing}.values(), key=lambda o: (o.name, o.version)
    )
    plan.owners = _kept_owners(snap, leaving)
    plan.outgoing_files = _outgoing_files(snap, leaving, plan.owners)
    plan.quarantine += _bytecode_of_moved(snap, [m.path for m in plan.moves()], plan.owners)
    plan.install = sorted(set(inventory.missing))
    plan.conda = sorted(set(inventory.conda_missing))
    plan.reported = [
        f for f in inventory.findings if f.code not in FIXABLE and f.severity != "info"
    ]
    return plan


def _bytecode_of_moved(
    snap: PrefixSnapshot, moving: list[str], kept: dict[str, str]
) -> list[QuarantineItem]:
    """The compiled files (__pycache__/NAME.*.pyc) of every source that moves go with it: left
    behind, they keep a package folder importable as a namespace package."""
    sources = {path[:-3] for path in moving if path.endswith(".py")}
    if not sources:
        return []
    moving_set = set(moving)
    out = []
    for path in snap.files:
        if (
            not path.endswith(".pyc")
            or "/__pycache__/" not in path
            or path in moving_set
            or path in kept
        ):
            continue
        folder, _, name = path.rpartition("/__pycache__/")
        source = f"{folder}/{name.split('.', 1)[0]}"
        if source in sources:
            out.append(
                QuarantineItem(
                    path,
                    "bytecode of a source that moves into the quarantine",
                    code=codes.ORPHAN_BYTECODE.code,
                )
            )
    return sorted(out, key=lambda item: item.path)


def _kept_owners(snap: PrefixSnapshot, leaving: set[str]) -> dict[str, str]:
    """path -> owner, for every path a staying distribution (or conda record) lists."""
    owners: dict[str, str] = {}
    for record in snap.conda:
        owners.update(
            dict.fromkeys((os.path.normpath(p) for p in record.files), f"{record.name} (conda)")
        )
    for dist in snap.dists:
        if dist.in_prefix and dist.dist_info not in leaving:
            for path in dist.paths:
                owners.setdefault(path, dist.name)
    return owners


def _outgoing_files(
    snap: PrefixSnapshot, leaving: set[str], kept: dict[str, str]
) -> dict[str, tuple[str, ...]]:
    """The files of each outgoing distribution that exist: its RECORD's (a legacy install's
    installed-files.txt, or its top-level folders) and everything in its .dist-info (.egg-info)
    folder; a path a staying distribution also lists stays where it is."""
    out: dict[str, tuple[str, ...]] = {}
    infos = {
        relative_path(d.dist_info, snap.prefix) + "/": d.dist_info
        for d in snap.dists
        if d.dist_info in leaving
    }
    extra: dict[str, list[str]] = {info: [] for info in infos.values()}
    if infos:
        for path in snap.files:
            for marker in (".dist-info/", ".egg-info/"):
                cut = path.find(marker)
                if cut > 0 and path[: cut + len(marker)] in infos:
                    extra[infos[path[: cut + len(marker)]]].append(path)
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
    return (
        path in ("pyvenv.cfg", "bin/activate")
        or path.startswith(("conda-meta/", ".lockguard/"))
        or bool(_PYTHON.match(path))
    )


def blocking(findings: list[Finding]) -> list[Finding]:
    """Findings that must be gone after an apply (otherwise: roll back, exit 5)."""
    return [f for f in findings if f.code in FIXABLE]
