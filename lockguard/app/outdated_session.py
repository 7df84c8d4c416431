"""`lockguard outdated`'s session: the lock resolved again in memory with every preference lifted
(what `resolve --upgrade` would write; nothing is written), compared with the lock, package by
package, with what holds a package below its newest release."""

from __future__ import annotations

from pathlib import Path

from lockguard.app.project import load_one_intent
from lockguard.app.relock import Relock
from lockguard.app.reporting import Messages, ResolveWatchFactory
from lockguard.app.resolve_session import ResolveSession
from lockguard.errors import InputError
from lockguard.model.upgrades import UpgradeRequest


def outdated_packages(
    intent_path: Path | None,
    messages: Messages,
    *,
    offline: bool,
    watch: ResolveWatchFactory | None = None,
    profile: str | None = None,
) -> dict:
    """platform -> {"locked": how many, "outdated": rows (name, side, locked, allowed, newest,
    held_back_by)}. InputError when there is no lock to compare with."""
    intent = load_one_intent(intent_path, profile, warn=messages.warn)
    prior = Relock(intent).prior()
    if not prior.platforms:
        for note in prior.notes:
            messages.warn(note)
        raise InputError("there is no lock to compare with", hint="run `lockguard resolve` first")
    names = sorted(
        {name for p in prior.platforms.values() for name in (*p.pip, *(r.name for r in p.conda))}
    )
    # every preference lifted (what --upgrade resolves), every locked name asked about
    session = ResolveSession(
        intent,
        messages,
        offline=offline,
        upgrade=UpgradeRequest(everything=True, packages=tuple((n, None) for n in names)),
        watch=watch,
    )
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
            rows.append(
                {
                    "name": package,
                    "side": "pip",
                    "locked": version,
                    "allowed": allowed,
                    "newest": back.newest if back else allowed,
                    "held_back_by": list(back.reasons) if back else [],
                }
            )
        if platform.conda is not None and platform.conda.solved and locked is not None:
            allowed_conda = {r.name: r.version for r in platform.conda.records}
            for record in sorted(locked.conda, key=lambda r: r.name):
                allowed = allowed_conda.get(record.name)
                if allowed != record.version:
                    rows.append(
                        {
                            "name": record.name,
                            "side": "conda",
                            "locked": record.version,
                            "allowed": allowed,
                            "newest": allowed,
                            "held_back_by": [],
                        }
                    )
        report[name] = {
            "locked": len(locked.pip) + len(locked.conda) if locked else 0,
            "outdated": rows,
        }
    return report
