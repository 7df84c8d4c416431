"""What is wrong with an installed environment, measured against its lock. Pure.

LG200 a locked package is missing          LG212 a package folder / module with no distribution
LG201 installed at another version         LG213 one distribution on two sys.path entries
LG202 installed but not in the lock        LG214 a .pth file injects directories into sys.path
LG203 a file no longer matches its RECORD  LG215 nvidia -cuNN families of several CUDA majors
LG204 a RECORD file is missing (or a shared library has another size)
LG205 a locked package installed as a legacy .egg-info (no RECORD: reinstalled as a wheel)
LG206 one distribution installed twice in one folder (two .dist-info; install/duplicates.py)
LG210 an unowned shared library            LG216 two files with one SONAME on the search path
LG211 an unowned file in an owned folder   LG217 the loader's path holds another copy of a locked
                                                 lib
LG218 /usr/local/cuda points at another CUDA than the lock's
LG219 a RECORD lists paths outside the prefix (never used)
LG220 a symlink points out of the prefix
LG221 a kept installer tool (pip, setuptools, wheel) requires another version of a locked package
LG222 an interrupted clean-install or restore left its transaction (found by the caller, which
      reads the state folder)
LG223 compiled bytecode (__pycache__/*.pyc) whose source is gone; an error where it is all a
      folder holds
      (the folder still imports, as a namespace package, where a fresh install has nothing)
LG230 a locked conda record is missing or different

Distributions that leave the prefix or change version are `outgoing`: a clean-install moves all
their files into the quarantine before pip runs (pip never uninstalls anything itself).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field

from lockguard.install.duplicates import in_one_folder, on_two_paths
from lockguard.install.egg_links import legacy_develop
from lockguard.install.lock_diff import LockView, Outgoing, against_lock
from lockguard.install.tools import tool_conflicts
from lockguard.model import codes
from lockguard.model.finding import ERROR, INFO, WARNING, Finding
from lockguard.model.names import cuda_family
from lockguard.model.prefix import SHARED_LIBRARY, PrefixSnapshot, relative_path
from lockguard.model.wording import counted


@dataclass(frozen=True, slots=True)
class QuarantineItem:
    path: str  # relative to the prefix
    reason: str
    owner: str = "unowned"
    code: str = ""


@dataclass
class Inventory:
    findings: list[Finding] = field(default_factory=list)
    quarantine: list[QuarantineItem] = field(default_factory=list)
    outgoing: list[Outgoing] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # name==version to install
    conda_missing: list[str] = field(default_factory=list)
    egg_pth: set[str] = field(default_factory=set)  # easy-install.pth files _egg_links moves

    @property
    def extra(self) -> list[str]:
        """Distributions that leave the prefix (not in the lock)."""
        return sorted(
            {
                o.name
                for o in self.outgoing
                if o.reason.startswith(("not in the lock", "CUDA family"))
            }
        )


def take_inventory(
    snap: PrefixSnapshot, lock: LockView | None, changed: dict[str, list[str]] | None = None
) -> Inventory:
    """`changed`: dist-info -> files whose bytes differ from the RECORD (from --verify-files)."""
    inv = Inventory()
    owners = _owners_of(snap, _asked_owners(snap))
    _record_problems(snap, inv)
    _files(snap, inv)
    inv.findings += on_two_paths(snap) + in_one_folder(snap)
    _egg_links(snap, inv)
    _pth(snap, owners, inv)
    _families(snap, inv)
    _sonames(snap, owners, inv)
    if lock is not None:
        diff = against_lock(snap, lock, changed or {})
        inv.findings += diff.findings
        inv.outgoing += diff.outgoing
        inv.missing += diff.missing
        inv.conda_missing += diff.conda_missing
        _loader_path(snap, lock, inv)
        _cuda_link(snap, lock, inv)
        inv.findings += tool_conflicts(snap, lock.pip)
    inv.findings.sort(key=lambda f: f.sort_key)
    return inv


# -- ownership -------------------------------------------------------------------------------------

# A prefix has hundreds of thousands of files: no path -> owner map of them all is built (hashing
# every path once more), only the set difference that finds the unowned ones, in C, and the owners
# of the few paths a finding names.


def _unowned(snap: PrefixSnapshot) -> set[str]:
    """The listed files that neither a distribution's RECORD nor a conda record lists."""
    known = snap.unrecorded
    if known is not None and (known.files, known.dists) == (len(snap.files), len(snap.dists)):
        unrecorded = known.paths  # the scan found them on its way
    else:
        unrecorded = set(snap.files).difference(
            *(dist.paths for dist in snap.dists if dist.in_prefix)
        )
    return unrecorded.difference(
        *((os.path.normpath(p) for p in record.files) for record in snap.conda)
    )


def _asked_owners(snap: PrefixSnapshot) -> set[str]:
    """The paths whose owner a finding may name: .pth files and the libraries with a SONAME."""
    return {relative_path(pth.path, snap.prefix) for pth in snap.pth} | set(snap.sonames)


def _owners_of(snap: PrefixSnapshot, paths: set[str]) -> dict[str, str]:
    """path -> owner for `paths`: the first distribution that lists it, else the first conda
    record."""
    owners: dict[str, str] = {}
    if not paths:
        return owners
    for dist in snap.dists:
        if dist.in_prefix:
            for path in paths.intersection(dist.paths):
                owners.setdefault(path, dist.name)
    for record in snap.conda:
        if len(owners) == len(paths):
            break
        for path in paths.intersection(os.path.normpath(p) for p in record.files):
            owners.setdefault(path, f"{record.name} (conda)")
    return owners


def _site_prefixes(snap: PrefixSnapshot) -> list[str]:
    return [site[len(snap.prefix) + 1 :] + "/" for site in snap.site_dirs]


def _ignorable(path: str, present: set[str]) -> bool:
    """Bytecode next to its source (a cache), and lockguard's own state."""
    if "/__pycache__/" in path:
        return True  # the bytecode rule (LG223) reads those
    return path.endswith(".pyc") and path[:-1] in present or "/.lockguard/" in path


# -- rules -----------------------------------------------------------------------------------------


def _record_problems(snap: PrefixSnapshot, inv: Inventory) -> None:
    for dist in snap.dists:
        if not (dist.outside or dist.folder_rows) or not dist.in_prefix:
            continue
        # rows the scan set aside: paths out of the prefix, rows naming a folder (`.`, `..`,
        # `pkg/`, or `lib` where lib is a folder) and rows with no path at all
        rows = [raw for raw in dist.outside if raw]
        empty = len(dist.outside) - len(rows)
        folders = [*dist.folder_rows] + [
            raw for raw in rows if _names_a_folder(raw, dist.site, snap.prefix)
        ]
        outside = [raw for raw in rows if raw not in folders]
        what = []
        if outside:
            what.append(f"paths outside the prefix: {_first_three(outside)}")
        if folders:
            what.append(f"rows that name a folder, not a file: {_first_three(folders)}")
        if empty:
            what.append(f"{counted(empty, 'empty row')} (no path)")
        inv.findings.append(
            codes.RECORD_OUTSIDE_PREFIX.finding(
                f"the RECORD of {dist.name} {dist.version} lists {'; and '.join(what)}",
                "lockguard never touches those paths; reinstall the package from a trusted wheel",
                os.path.join(dist.dist_info, "RECORD"),
            )
        )


def _names_a_folder(raw: str, site: str, prefix: str) -> bool:
    """A RECORD row inside the prefix that names the site folder or a folder above it."""
    absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(site, raw))
    inside = absolute.startswith(prefix.rstrip(os.sep) + os.sep)
    return inside and (raw.endswith("/") or absolute == site or site.startswith(absolute + os.sep))


def _first_three(rows: list[str]) -> str:
    shown = ", ".join(repr(r) for r in rows[:3])
    return shown + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


def _files(snap: PrefixSnapshot, inv: Inventory) -> None:
    sites = _site_prefixes(snap)
    unowned = sorted(_unowned(snap))  # in C first: few files remain
    owned_tops = _owned_tops(snap, sites) if unowned else {}
    orphans: dict[str, list[str]] = {}
    # only bytecode needs it
    present = set(snap.files) if any(p.endswith(".pyc") for p in unowned) else set()
    _orphan_bytecode(
        snap, [p for p in unowned if "/__pycache__/" in p and p.endswith(".pyc")], present, inv
    )
    for path in unowned:
        if _ignorable(path, present):
            continue
        name = path.rsplit("/", 1)[-1]
        target = snap.symlinks.get(path)
        if target is not None and not (target + os.sep).startswith(snap.prefix + os.sep):
            inv.findings.append(
                codes.SYMLINK_OUT.finding(
                    f"{path} is a symlink out of the prefix, to {target}",
                    "lockguard moves the link into quarantine and never follows it",
                    os.path.join(snap.prefix, path),
                )
            )
            inv.quarantine.append(
                QuarantineItem(
                    path, f"symlink out of the prefix ({target})", code=codes.SYMLINK_OUT.code
                )
            )
            continue
        site = next((s for s in sites if path.startswith(s)), None)
        if site is None:
            if SHARED_LIBRARY.search(name):
                _unowned_library(snap, path, inv)
            continue
        top, sep, _rest = path[len(site) :].partition("/")
        if top.endswith((".dist-info", ".egg-info")):
            continue
        if not sep:
            if name.endswith(".pth"):
                continue  # reported by the .pth rule
            if name.endswith(".egg-link"):
                continue  # a legacy develop install: _egg_links
            if SHARED_LIBRARY.search(name):
                _unowned_library(snap, path, inv)
            elif name.endswith((".py", ".pyd", ".pyc")) or ".cpython-" in name:
                orphans.setdefault(path, []).append(path)
            continue
        folder = site + top
        owner = owned_tops.get(folder)
        if owner:
            inv.findings.append(
                codes.UNOWNED_FILE.finding(
                    f"{path} is inside {owner}'s folder but not in its RECORD",
                    "left by another install or an older version; clean-install quarantines it",
                    os.path.join(snap.prefix, path),
                )
            )
            inv.quarantine.append(
                QuarantineItem(path, f"not in {owner}'s RECORD", "unowned", codes.UNOWNED_FILE.code)
            )
        else:
            orphans.setdefault(folder, []).append(path)
    for top, paths in sorted(orphans.items()):
        inv.findings.append(
            codes.ORPHAN_FOLDER.finding(
                f"{top} belongs to no installed distribution ({counted(len(paths), 'file')})",
                "a leftover of an uninstalled package; clean-install quarantines it",
                os.path.join(snap.prefix, top),
            )
        )
        inv.quarantine += [
            QuarantineItem(p, f"{top} belongs to no distribution", code=codes.ORPHAN_FOLDER.code)
            for p in sorted(paths)
        ]


def _orphan_bytecode(
    snap: PrefixSnapshot, compiled: list[str], present: set[str], inv: Inventory
) -> None:
    """LG223: __pycache__/NAME.TAG.pyc that no distribution lists and whose NAME.py is gone. Python
    never imports it as a module, but a package folder holding nothing else still imports as a
    namespace package (`import torch.ao.sparsity` works where a fresh torch has no such module):
    an error there, a warning elsewhere. clean-install quarantines it; the folders it leaves empty
    go too."""
    by_folder: dict[str, list[str]] = {}
    for path in compiled:
        folder, _, name = path.rpartition("/__pycache__/")
        if f"{folder}/{name.split('.', 1)[0]}.py" not in present:
            by_folder.setdefault(folder, []).append(path)
    if not by_folder:
        return
    ordered = sorted(present)
    for folder, paths in sorted(by_folder.items()):
        alone = _only_bytecode(ordered, folder)
        message = (
            f"{folder}/__pycache__ holds {counted(len(paths), 'compiled file')} "
            "whose source is gone"
            + (
                f"; they are all {folder} holds, so `import {_dotted(snap, folder)}` still "
                "succeeds (a namespace package) where a fresh install has no such module"
                if alone
                else ""
            )
        )
        inv.findings.append(
            codes.ORPHAN_BYTECODE.finding(
                message,
                "left by an older version or an uninstall; clean-install quarantines them",
                os.path.join(snap.prefix, folder),
                severity=ERROR if alone else WARNING,
            )
        )
        inv.quarantine += [
            QuarantineItem(p, "compiled file whose source is gone", code=codes.ORPHAN_BYTECODE.code)
            for p in sorted(paths)
        ]


def _only_bytecode(ordered: list[str], folder: str) -> bool:
    """Whether every file under folder lies in one of its __pycache__ folders (at any depth)."""
    start = folder + "/"
    for path in ordered[bisect.bisect_left(ordered, start) :]:
        if not path.startswith(start):
            break
        if "/__pycache__/" not in path[len(folder) :]:
            return False
    return True


def _dotted(snap: PrefixSnapshot, folder: str) -> str:
    site = next((s for s in _site_prefixes(snap) if folder.startswith(s)), "")
    return folder[len(site) :].replace("/", ".") if site else folder


def _owned_tops(snap: PrefixSnapshot, sites: list[str]) -> dict[str, str]:
    """site/top-level folder -> the distribution that owns files in it."""
    tops: dict[str, str] = {}
    for dist in snap.dists:
        if not dist.in_prefix:
            continue
        for site in sites:
            cut = len(site)
            for path in dist.paths:
                if path.startswith(site):
                    top, sep, _rest = path[cut:].partition("/")
                    if sep:
                        tops.setdefault(site + top, dist.name)
    return tops


def _unowned_library(snap: PrefixSnapshot, path: str, inv: Inventory) -> None:
    inv.findings.append(
        codes.UNOWNED_LIBRARY.finding(
            f"{path} is a shared library no package owns",
            "the loader may pick it instead of the locked one; clean-install quarantines it",
            os.path.join(snap.prefix, path),
        )
    )
    inv.quarantine.append(
        QuarantineItem(path, "shared library no package owns", code=codes.UNOWNED_LIBRARY.code)
    )


def _egg_links(snap: PrefixSnapshot, inv: Inventory) -> None:
    found = legacy_develop(snap, _site_prefixes(snap))
    inv.findings += found.findings
    inv.quarantine += [QuarantineItem(path, why, code=code) for path, why, code in found.moves]
    inv.egg_pth |= found.pth


def _pth(snap: PrefixSnapshot, owners: dict[str, str], inv: Inventory) -> None:
    for pth in snap.pth:
        relative = relative_path(pth.path, snap.prefix)
        if relative in inv.egg_pth:
            continue  # reported with its develop installs
        owner = owners.get(relative)
        existing = list(pth.existing)
        if not existing:
            continue
        severity = INFO if owner else WARNING
        inv.findings.append(
            codes.PTH_INJECTS.finding(
                f"{os.path.basename(pth.path)} adds {', '.join(existing)} to sys.path"
                + (f" (from {owner})" if owner else " (no package owns it)"),
                "modules there shadow the locked ones; remove the .pth if it is a leftover",
                pth.path,
                severity=severity,
            )
        )


def _families(snap: PrefixSnapshot, inv: Inventory) -> None:
    families: dict[str, list[str]] = {}
    for dist in snap.dists:
        family = cuda_family(dist.name)
        if family:
            families.setdefault(family, []).append(f"{dist.name} {dist.version}")
    if len(families) > 1:
        listed = "; ".join(f"cu{k}: {', '.join(sorted(v))}" for k, v in sorted(families.items()))
        inv.findings.append(
            codes.MIXED_CUDA_WHEELS.finding(
                f"nvidia packages of several CUDA majors are installed ({listed})",
                "they overwrite each other in the shared nvidia/ folder; clean-install removes "
                "the ones the lock does not pin",
                snap.prefix,
            )
        )


def _sonames(snap: PrefixSnapshot, owners: dict[str, str], inv: Inventory) -> None:
    by_soname: dict[str, list[str]] = {}
    for path, name in snap.sonames.items():
        by_soname.setdefault(name, []).append(path)
    for name, paths in sorted(by_soname.items()):
        if len(paths) > 1:
            listed = ", ".join(f"{p} ({owners.get(p, 'unowned')})" for p in sorted(paths))
            inv.findings.append(
                codes.DUPLICATE_SONAME.finding(
                    f"{counted(len(paths), 'file')} {'has' if len(paths) == 1 else 'have'} "
                    f"the SONAME {name}: {listed}",
                    "which one loads depends on RPATH and search order; keep only the locked one",
                    os.path.join(snap.prefix, sorted(paths)[0]),
                )
            )


_VERSIONED = re.compile(r"^lib(?P<lib>[A-Za-z_]+)\.so\.(?P<version>\d+(?:\.\d+)*)$")


def _loader_path(snap: PrefixSnapshot, lock: LockView, inv: Inventory) -> None:
    """Only a library with the SONAME the locked one is loaded by can be taken in its place: a
    libcudart.so.13 is never loaded for libcudart.so.12, whatever the search order."""
    expected = {"nccl": lock.nccl, "cudart": lock.cuda, "cudnn": lock.cudnn}
    for entry in snap.library_dirs:
        for filename, soname in entry.libraries:
            match = _VERSIONED.match(filename)
            want = expected.get(match.group("lib")) if match else None
            if not match or not want:
                continue
            lib, have = match.group("lib"), match.group("version")
            wanted = f"lib{lib}.so.{want.split('.')[0]}"
            if (soname or f"lib{lib}.so.{have.split('.')[0]}") != wanted:
                continue
            depth = len(have.split("."))
            if have.split(".")[: min(depth, len(want.split(".")))] != want.split(".")[:depth]:
                # the registry's severity, the one doctor gives the same library (LG302)
                inv.findings.append(
                    codes.LOADER_PATH_COPY.finding(
                        f"{entry.path} ({entry.origin}) holds {filename} (SONAME {wanted}, "
                        f"the name the lock's {lib} {want} is loaded by)",
                        "the loader can pick it before the wheel's own copy; "
                        f"remove {entry.path} from {entry.origin}",
                        entry.origin if entry.origin != "LD_LIBRARY_PATH" else None,
                    )
                )


def _cuda_link(snap: PrefixSnapshot, lock: LockView, inv: Inventory) -> None:
    if not snap.cuda_link or not lock.cuda:
        return
    link, target = snap.cuda_link
    match = re.search(r"cuda-(\d+\.\d+)", target)
    if match and match.group(1) != lock.cuda:
        inv.findings.append(
            codes.USR_LOCAL_CUDA.finding(
                f"{link} points at {target} (CUDA {match.group(1)}); the lock's "
                f"CUDA is {lock.cuda}",
                "extension builds that use /usr/local/cuda will mismatch "
                "torch; set CUDA_HOME to the lock's toolkit "
                "(lockguard changes nothing outside the prefix)",
                link,
            )
        )
