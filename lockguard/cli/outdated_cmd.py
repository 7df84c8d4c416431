"""`lockguard outdated`: the locked packages that have newer releases the intent allows (what
`lockguard resolve --upgrade` would move them to), and, for those held below the newest release,
which requirement or knowledge rule holds them back. Read-only: the lock is resolved again in
memory with every preference lifted; nothing is written. Exit 0, 2 (no lock, bad input), 4 (an
index unreachable and no cache)."""

from __future__ import annotations

import click

from lockguard.cli.common import get_ui, intent_option, json_option, load_project_intent
from lockguard.errors import InputError


class _Quiet:
    """The Ui with the resolve's own info lines moved to -v (outdated prints its table instead)."""

    def __init__(self, ui) -> None:
        self._ui = ui

    def info(self, message: str) -> None:
        self._ui.debug(message)

    def __getattr__(self, name: str):
        return getattr(self._ui, name)


@click.command()
@intent_option
@click.option("--offline", is_flag=True, help="Use cached index pages only (exit 4 naming what is missing).")
@json_option
@click.pass_context
def outdated(ctx, intent_path, offline, as_json) -> int:
    """Locked packages with newer releases the intent allows, and what holds the others back."""
    from lockguard.cli.relock import Relock
    from lockguard.cli.resolve_session import ResolveSession
    from lockguard.model.upgrades import UpgradeRequest

    ui = get_ui(ctx, "outdated")
    intent = load_project_intent(intent_path, ui=ui)
    prior = Relock(intent).prior()
    if not prior.platforms:
        for note in prior.notes:
            ui.warn(note)
        raise InputError("there is no lock to compare with", hint="run `lockguard resolve` first")
    names = sorted({name for p in prior.platforms.values() for name in (*p.pip, *(r.name for r in p.conda))})
    # every preference lifted (what --upgrade resolves), every locked name asked about
    session = ResolveSession(intent, _Quiet(ui), offline=offline,
                             upgrade=UpgradeRequest(everything=True, packages=tuple((n, None) for n in names)))
    lock = session.run()
    report = {}
    for platform in lock.platforms:
        name = platform.target.platform
        locked = prior.platform(name)
        notes = next((n for n in session.relock.notes if n.platform == name), None)
        held = {h.name: h for h in notes.held_back} if notes else {}
        rows = []
        allowed_pip = {pin.name: pin.version for pin in platform.pip.pins}
        for package, version in sorted((locked.pip if locked else {}).items()):
            allowed = allowed_pip.get(package)
            back = held.get(package)
            if allowed == version and back is None:
                continue
            rows.append({"name": package, "side": "pip", "locked": version, "allowed": allowed,
                         "newest": back.newest if back else allowed, "held_back_by": list(back.reasons) if back else []})
        if platform.conda is not None and platform.conda.solved and locked is not None:
            allowed_conda = {r.name: r.version for r in platform.conda.records}
            for record in sorted(locked.conda, key=lambda r: r.name):
                allowed = allowed_conda.get(record.name)
                if allowed != record.version:
                    rows.append({"name": record.name, "side": "conda", "locked": record.version, "allowed": allowed,
                                 "newest": allowed, "held_back_by": []})
        report[name] = {"locked": len(locked.pip) + len(locked.conda) if locked else 0, "outdated": rows}
    if as_json:
        ui.emit_json({"platforms": report})
        return 0
    for name, found in report.items():
        rows = found["outdated"]
        if not rows:
            ui.info(f"{name}: all {found['locked']} locked packages are at the newest release the index has for them")
            continue
        newer = sum(1 for r in rows if r["allowed"] and r["allowed"] != r["locked"])
        ui.info(f"{name}: {newer} of {found['locked']} locked packages have newer allowed releases "
                "(`lockguard resolve --upgrade-package NAME` moves one); "
                f"{sum(1 for r in rows if r['held_back_by'])} are held below the newest")
        ui.table(["package", "locked", "allowed", "newest", "held back by"],
                 [[r["name"] + (" (conda)" if r["side"] == "conda" else ""), r["locked"], r["allowed"] or "(not needed)",
                   r["newest"] or "", "; ".join(r["held_back_by"])] for r in rows],
                 title=name if len(report) > 1 else None)
    return 0
