"""Wiring for `lockguard clean-install`: scan, plan, quarantine, apply, verify, roll back."""

from __future__ import annotations

from pathlib import Path

from lockguard.check.snapshot import Snapshot
from lockguard.cli.env_check import host_conda_platform, lock_view
from lockguard.cli.output import Ui
from lockguard.errors import InputError, InstallFailed
from lockguard.install.inventory import take_inventory
from lockguard.install.plan import Plan, blocking, make_plan
from lockguard.io.env.quarantine import Quarantine, list_quarantines
from lockguard.knowledge.tables import Knowledge
from lockguard.model.lock_paths import lock_file


def lock_must_be_current(snapshot: Snapshot, knowledge: Knowledge) -> None:
    from lockguard.check.rules_lock import lock_state

    for finding in lock_state(snapshot):
        raise InputError(f"{finding.file}: {finding.message}", file=finding.file,
                         hint="a clean-install applies only a current, untouched lock: " + (finding.hint or ""))


def undo_interrupted(prefix: Path, ui: Ui) -> list[str]:
    """A run killed mid-quarantine left a journal: put its files back before anything else."""
    undone = []
    for info in list_quarantines(prefix):
        if info.state == "incomplete":
            count = Quarantine(prefix, info.id).restore()
            ui.warn(f"quarantine {info.id} was interrupted; put back {count} files")
            undone.append(info.id)
    return undone


def build_plan(snapshot: Snapshot, knowledge: Knowledge, prefix: Path | None, python: Path | None):
    from lockguard.io.env.prefix_scan import scan_prefix

    scan = scan_prefix(prefix, python)
    platform = host_conda_platform() if host_conda_platform() in snapshot.intent.platforms else snapshot.intent.platforms[0]
    requirements = snapshot.intent.source.root / lock_file(snapshot.intent, "requirements", platform)
    inventory = take_inventory(scan, lock_view(snapshot, knowledge))
    plan = make_plan(inventory, prefix=scan.prefix, python=scan.python, requirements=str(requirements))
    return scan, plan, platform


def apply_plan(plan: Plan, snapshot: Snapshot, knowledge: Knowledge, platform: str, ui: Ui) -> str | None:
    """Quarantine, install, uninstall, conda; then verify. Returns the quarantine id (or None).
    On failure the quarantine is put back and InstallFailed is raised (exit 5)."""
    from lockguard.io.env import pip_apply

    quarantine = Quarantine.create(Path(plan.prefix), plan.quarantine) if plan.quarantine else None
    try:
        if quarantine:
            moved = quarantine.move_all()
            ui.info(f"quarantined {moved} files in {quarantine.root}")
        if plan.install:
            ui.info(f"installing {len(plan.install)} packages from {Path(plan.requirements).name}")
            pip_apply.install_lock(plan.python, Path(plan.requirements))
        if plan.uninstall:
            ui.info("uninstalling " + ", ".join(plan.uninstall))
            pip_apply.uninstall(plan.python, plan.uninstall)
        if plan.conda:
            _install_conda(plan, snapshot, platform, ui)
        remaining = _verify(snapshot, knowledge, plan)
        if remaining:
            lines = "\n    ".join(f"{f.code} {f.message}" for f in remaining[:10])
            raise InstallFailed(f"the environment still differs from the lock after applying it:\n    {lines}",
                                hint="the quarantine was put back; `lockguard check --env` shows the details")
    except InstallFailed:
        if quarantine and quarantine.state() == "incomplete":
            count = quarantine.restore()
            ui.warn(f"rolled back: put {count} quarantined files back")
        raise
    if quarantine:
        quarantine.finish()
        return quarantine.id
    return None


def _install_conda(plan: Plan, snapshot: Snapshot, platform: str, ui: Ui) -> None:
    from lockguard.io.index.cache import Cache
    from lockguard.io.index.conda import install_locked

    conda_lock = snapshot.of_kind("conda-lock")
    packages = (conda_lock.conda_lock or {}).get("package", []) if conda_lock else []
    if not any(p.get("manager") == "conda" for p in packages):
        raise InstallFailed("the lock has no solved conda records to install",
                            hint="resolve with reachable channels (not --conda-from-knowledge)")
    ui.info(f"installing conda records: {', '.join(plan.conda)}")
    install_locked(Path(plan.prefix), _full_conda_lock(snapshot), platform, Cache().root / "pkgs")


def _full_conda_lock(snapshot: Snapshot) -> list[dict]:
    """conda-lock.yml with its dependencies and hashes (the check's fast reader keeps names only)."""
    from lockguard.lockfiles.conda_lock import read_document

    lock = snapshot.of_kind("conda-lock")
    return read_document(lock.text or "").get("package", []) if lock else []


def _verify(snapshot: Snapshot, knowledge: Knowledge, plan: Plan):
    from lockguard.io.env.prefix_scan import scan_prefix

    scan = scan_prefix(Path(plan.prefix), Path(plan.python))
    return blocking(take_inventory(scan, lock_view(snapshot, knowledge)).findings)
