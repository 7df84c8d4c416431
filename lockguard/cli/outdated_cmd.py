"""`lockguard outdated`: the locked packages that have newer releases the intent allows (what
`lockguard resolve --upgrade` would move them to), and, for those held below the newest release,
which requirement or knowledge rule holds them back. Read-only: the lock is resolved again in
memory with every preference lifted; nothing is written. Exit 0, 2 (no lock, bad input), 4 (an
index unreachable and no cache)."""

from __future__ import annotations

import click

from lockguard.app.outdated_session import outdated_packages
from lockguard.cli.common import get_ui, intent_option, json_option, profile_option
from lockguard.cli.resolve_progress import ResolveProgress


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
@click.option(
    "--offline", is_flag=True, help="Use cached index pages only (exit 4 naming what is missing)."
)
@profile_option
@json_option
@click.pass_context
def outdated(ctx, intent_path, offline, profile, as_json) -> int:
    """Locked packages with newer releases the intent allows, and what holds the others back."""
    ui = get_ui(ctx, "outdated")
    report = outdated_packages(
        intent_path,
        _Quiet(ui),
        offline=offline,
        watch=lambda counts: ResolveProgress(ui, counts),
        profile=profile,
    )
    if as_json:
        ui.emit_json({"platforms": report})
        return 0
    for name, found in report.items():
        rows = found["outdated"]
        if not rows:
            ui.info(
                f"{name}: all {found['locked']} locked packages are at the newest release the "
                "index has for them"
            )
            continue
        newer = sum(1 for r in rows if r["allowed"] and r["allowed"] != r["locked"])
        ui.info(
            f"{name}: {newer} of {found['locked']} locked packages have newer allowed releases "
            "(`lockguard resolve --upgrade-package NAME` moves one); "
            f"{sum(1 for r in rows if r['held_back_by'])} are held below the newest"
        )
        ui.table(
            ["package", "locked", "allowed", "newest", "held back by"],
            [
                [
                    r["name"] + (" (conda)" if r["side"] == "conda" else ""),
                    r["locked"],
                    r["allowed"] or "(not needed)",
                    r["newest"] or "",
                    "; ".join(r["held_back_by"]),
                ]
                for r in rows
            ],
            title=name if len(report) > 1 else None,
        )
    return 0
