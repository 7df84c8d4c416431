"""The doctor's report: one line per check (ok / warn / error / skip), then the fixes."""

from __future__ import annotations

from lockguard.doctor.checks import Check

MARK = {"ok": "ok   ", "warn": "warn ", "error": "error", "skip": "skip "}


def text(checks: list[Check], *, header: str) -> str:
    lines = [header]
    width = max(len(c.title) for c in checks) if checks else 0
    for check in checks:
        lines.append(f"  {MARK[check.status]}  {check.title.ljust(width)}  {check.detail}")
    problems = [c for c in checks if c.finding and c.status in ("error", "warn")]
    if problems:
        lines.append("")
        lines.append("how to fix:")
        for check in problems:
            lines.append(f"  {check.id} {check.title}: {check.finding.hint}")
    errors = sum(c.status == "error" for c in checks)
    warnings = sum(c.status == "warn" for c in checks)
    lines.append("")
    lines.append(f"{errors} errors, {warnings} warnings")
    return "\n".join(lines) + "\n"
