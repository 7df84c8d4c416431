"""The steps of a clean-install's transaction after the quarantine: the install engine (uv or pip,
io/env/engines/) installs what the plan names (and lockguard says how many it really installed:
counted by effect, the .dist-info folders that appeared, never by what was asked), conda records
through rattler, then verification by effect.
Any failure raises; install_session.apply_plan rolls everything back."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard.app.install_files import install_batches
from lockguard.errors import InstallFailed
from lockguard.install.inventory import take_inventory
from lockguard.install.plan import Plan, blocking
from lockguard.install.verify import smoke_modules
from lockguard.io.env.engines.base import EngineProgress, InstallEngine, LockedFiles
from lockguard.io.env.engines.rattler import RattlerEngine
from lockguard.io.env.engines.registry import run_engine
from lockguard.io.env.import_smoke import run_smoke
from lockguard.io.env.prefix_scan import scan_prefix
from lockguard.io.index.cache import Cache
from lockguard.lockfiles.conda_lock import read_document
from lockguard.model.names import canonical_name, same_version
from lockguard.model.wording import counted

if TYPE_CHECKING:
    from lockguard.app.install_source import LockSource
    from lockguard.app.reporting import InstallProgress
    from lockguard.check.snapshot import Snapshot
    from lockguard.io.env.quarantine import Quarantine
    from lockguard.model.prefix import PrefixSnapshot


def _dist_infos(sites: list[Path]) -> set[tuple[str, str]]:
    """(site, folder name) of every .dist-info with a RECORD: what pip has finished installing."""
    out: set[tuple[str, str]] = set()
    for site in sites:
        try:
            names = os.listdir(site)
        except OSError:
            continue
        out.update(
            (str(site), n)
            for n in names
            if n.endswith(".dist-info") and (site / n / "RECORD").exists()
        )
    return out


def _name_version(folder: str) -> tuple[str, str]:
    name, _, version = folder[: -len(".dist-info")].partition("-")
    return canonical_name(name), version


def _sees_base_site(scan: PrefixSnapshot) -> bool:
    """A venv that also sees its base interpreter's site-packages (--system-site-packages)."""
    base = scan.base_prefix
    return (
        bool(base)
        and base != scan.prefix
        and any(
            entry.startswith(f"{base}/") and entry.endswith("-packages") for entry in scan.sys_path
        )
    )


# the longest an engine may take for a whole install
INSTALL_TIMEOUT = 3600


def install_packages(
    plan: Plan,
    scan: PrefixSnapshot,
    source: LockSource,
    q: Quarantine,
    progress: InstallProgress,
    engine: InstallEngine,
) -> list[str]:
    """The engine installs exactly what the plan says, from the lock's entries (hashes and index
    options). What it installed ("name==version") is what appeared in the site folders; a package
    it did not install (it found one it took for installed) fails the run."""
    wanted = {canonical_name(p.split("==", 1)[0]): p.split("==", 1)[1] for p in plan.install}
    total, fetched, done = len(wanted), [], []
    sites = [Path(s) for s in scan.site_dirs] or [Path(plan.prefix) / "lib"]
    before = _dist_infos(sites)

    def line(text: str) -> None:
        if text.startswith("Collecting "):  # pip's words; uv says nothing until it has all
            fetched.append(text.split()[1])
            progress.step(f"downloading {fetched[-1]} ({len(fetched)}/{total})")
        elif text.startswith("Installing collected packages") or text.startswith("Prepared "):
            progress.step(f"installing {counted(total, 'package')}")  # pip's words, then uv's

    def tick() -> None:
        for _site, info in sorted(_dist_infos(sites) - before):
            key, version = _name_version(info)
            if key in wanted and key not in done and same_version(version, wanted[key]):
                done.append(key)
                progress.step(f"installed {key} {version} ({len(done)}/{total})")

    q.log(event="pip-start", packages=total, engine=engine.name)
    progress.step(f"installing {counted(total, 'package')} with {engine.name}")
    deadline = time.monotonic() + INSTALL_TIMEOUT
    said: list[str] = []
    batches = install_batches(plan, scan, source, q.root, progress, batched=engine.batches)
    with contextlib.closing(batches):
        for requirements in batches:  # the engine unpacks what landed while the rest downloads
            finished = run_engine(
                engine,
                Path(plan.prefix),
                plan.python,
                LockedFiles(requirements, total, base_site=_sees_base_site(scan)),
                deadline=deadline,
                progress=EngineProgress(line, tick),
            )
            said.append(finished.output)
    tick()  # what appeared since the last tick (uv installs in a few hundred milliseconds)
    installed = {}
    for _site, info in _dist_infos(sites) - before:
        key, version = _name_version(info)
        if key in wanted and same_version(version, wanted[key]):
            installed[key] = f"{key}=={wanted[key]}"
    skipped = sorted(
        f"{name}=={version}" for name, version in wanted.items() if name not in installed
    )
    if skipped:
        quoted = [
            text.strip()
            for text in "\n".join(said).splitlines()
            if "already satisfied" in text
            and any(n.split("==")[0] in canonical_name(text) for n in skipped)
        ]
        raise InstallFailed(
            f"{engine.name} did not install {', '.join(skipped)}"
            + (f" (it says: {'; '.join(quoted[:3])})" if quoted else ""),
            hint=f"something {engine.name} takes for an installed copy is left in the environment; "
            "`lockguard check --env` shows what",
        )
    progress.say(f"installed {counted(len(installed), 'package')} with {engine.name}")
    return sorted(installed.values())


def install_conda(plan: Plan, source: LockSource, progress: InstallProgress) -> None:
    snapshot = source.snapshot
    conda_lock = snapshot.of_kind("conda-lock") if snapshot else None
    packages = (conda_lock.conda_lock or {}).get("package", []) if conda_lock else []
    if snapshot is None or not any(p.get("manager") == "conda" for p in packages):
        raise InstallFailed(
            "the lock has no solved conda records to install",
            hint="resolve with reachable channels (not --conda-from-knowledge)",
        )
    progress.step(f"installing conda records with rattler: {', '.join(plan.conda)}")
    RattlerEngine().install_records(
        Path(plan.prefix), _full_conda_lock(snapshot), source.platform, Cache().root / "pkgs"
    )
    progress.say(f"installed {counted(len(plan.conda), 'conda record')}")


def _full_conda_lock(snapshot: Snapshot) -> list[dict]:
    """conda-lock.yml with its dependencies and hashes (the check's fast reader keeps names
    only)."""
    lock = snapshot.of_kind("conda-lock")
    return read_document(lock.text or "").get("package", []) if lock else []


def verify(plan: Plan, source: LockSource, q: Quarantine, progress: InstallProgress) -> list[str]:
    """By effect: a fresh scan must find every RECORD file of every locked distribution (and
    nothing else the plan fixes), and the target interpreter must import what the intent names."""
    progress.step("verifying the installed files against their RECORDs")
    scan = scan_prefix(Path(plan.prefix), Path(plan.python))
    remaining = blocking(take_inventory(scan, source.view).findings)
    if remaining:
        lines = "\n    ".join(f"{f.code} {f.message}" for f in remaining[:10])
        raise InstallFailed(
            f"the environment still differs from the lock after applying it:\n    {lines}",
            hint="`lockguard check --env` shows the details",
        )
    modules = smoke_modules(scan, source.view.pip, source.direct)
    if modules:
        progress.step(f"import smoke: {', '.join(modules)}")
    count = iter(range(1, len(modules) + 1))
    smoke = run_smoke(
        plan.python,
        modules,
        str(q.root),
        lambda module: progress.step(f"imported {module} ({next(count)}/{len(modules)})"),
    )
    if not smoke.ok:
        detail = "\n    ".join(smoke.detail.splitlines()[-15:])
        raise InstallFailed(
            f"the import smoke failed: `{smoke.command}` in {plan.prefix}:\n    {detail}",
            hint="the lock does not work in this environment as installed; fix the cause "
            "(a missing system library? a wrong CUDA?) and run clean-install again",
        )
    locked = sum(1 for d in scan.dists if d.in_prefix and d.name in source.view.pip)
    progress.say(
        f"verified: every RECORD file of the {counted(locked, 'locked distribution')} is present"
        + (f"; imported {', '.join(smoke.imported)}" if smoke.imported else "")
    )
    return smoke.imported
