"""The change report (check/lock_changes.py) as text lines, a Markdown table for a pull request,
and JSON data. Pure."""

from __future__ import annotations

from lockguard.check.lock_changes import (
    ChangeReport,
    PackageChange,
    PlatformChanges,
    SettledEdit,
    edit_lines,
)
from lockguard.model.wording import counted


def summary(platform: PlatformChanges) -> str:
    if platform.unchanged:
        return "unchanged"
    if platform.new_lock:
        sides = {
            side: sum(1 for c in platform.packages if c.side == side) for side in ("pip", "conda")
        }
        return "new lock, " + ", ".join(
            f"{counted(n, side + ' package')}" for side, n in sides.items() if n
        )
    counts = ", ".join(f"{n} {kind}" for kind, n in platform.counts().items())
    facts = (
        f"{len(platform.facts)} CUDA fact{'s' if len(platform.facts) != 1 else ''} moved"
        if platform.facts
        else ""
    )
    if not counts and not facts:  # bytes change, no pin does: never "unchanged"
        return f"no package moved; {', '.join(platform.rewritten)} rewritten"
    return ", ".join(part for part in (counts, facts) if part)


def _name(change: PackageChange) -> str:
    return f"{change.name} (conda)" if change.side == "conda" else change.name


def text_lines(report: ChangeReport, *, list_new: bool = False) -> list[str]:
    """`PLATFORM: summary`, then the packages (CUDA stack first) and the facts that moved; a new
    lock is summarized unless `list_new`."""
    lines: list[str] = edit_lines(report.edits)
    for platform in report.platforms:
        lines.append(f"{platform.platform}: {summary(platform)}")
        if platform.unchanged or (platform.new_lock and not list_new):
            continue
        width = max(len(_name(c)) for c in platform.packages) if platform.packages else 0
        for title, group in (("CUDA stack", platform.cuda_stack), ("other", platform.other)):
            if not group:
                continue
            if platform.cuda_stack:
                lines.append(f"  {title}:")
            indent = "    " if platform.cuda_stack else "  "
            for change in group:
                values = (
                    change.new
                    if change.kind == "added"
                    else change.old
                    if change.kind == "removed"
                    else f"{change.old} -> {change.new}"
                )
                lines.append(f"{indent}{change.kind:<10}  {_name(change):<{width}}  {values}")
        if platform.facts:
            lines.append("  CUDA facts: " + "; ".join(f.text() for f in platform.facts))
    return lines


def markdown(report: ChangeReport, *, title: str = "Lock changes") -> str:
    """A Markdown section a CI job can post on a pull request."""
    out = [f"### {title}", ""]
    for platform in report.platforms:
        out += [f"#### {platform.platform}: {summary(platform)}", ""]
        if platform.unchanged:
            continue
        if platform.packages:
            out += ["| | change | package | before | after |", "|---|---|---|---|---|"]
            for group, changes in (("CUDA stack", platform.cuda_stack), ("other", platform.other)):
                for change in changes:
                    out.append(
                        f"| {group} | {change.kind} | `{_name(change)}` | "
                        f"{change.old or ''} | {change.new or ''} |"
                    )
            out.append("")
        if platform.facts:
            out += ["| CUDA fact | before | after |", "|---|---|---|"]
            for fact in platform.facts:
                after = fact.new or ""
                if fact.gained or fact.lost:
                    after += (
                        " ("
                        + ", ".join(
                            [*(f"+{a}" for a in fact.gained), *(f"-{a}" for a in fact.lost)]
                        )
                        + ")"
                    )
                out.append(f"| {fact.fact} | {fact.old or ''} | {after} |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def to_data(report: ChangeReport) -> dict[str, object]:
    """The report as JSON data (part of the stable --json envelopes of resolve and diff)."""

    def change(c: PackageChange) -> dict[str, str | None]:
        return {"name": c.name, "side": c.side, "change": c.kind, "old": c.old, "new": c.new}

    return {
        "unchanged": report.unchanged,
        "edits": [edit_data(settled) for settled in report.edits],
        "platforms": {
            p.platform: {
                "unchanged": p.unchanged,
                "new_lock": p.new_lock,
                "rewritten": list(p.rewritten),
                "counts": p.counts(),
                "cuda_stack": [change(c) for c in p.cuda_stack],
                "other": [change(c) for c in p.other],
                "facts": [
                    {
                        "fact": f.fact,
                        "old": f.old,
                        "new": f.new,
                        "gained": list(f.gained),
                        "lost": list(f.lost),
                    }
                    for f in p.facts
                ],
            }
            for p in report.platforms
        },
    }


def edit_data(settled: SettledEdit) -> dict[str, object]:
    """A hand edit a relock reverted or adopted, as JSON data (`changes.edits`)."""
    edit = settled.edit
    return {
        "file": edit.file,
        "text": settled.text(),
        "known": edit.known,
        "problem": edit.problem,
        "rewritten": settled.rewritten,
        "pins": [
            {
                "name": pin.name,
                "side": pin.side,
                "platform": pin.platform,
                "wrote": pin.wrote,
                "edited": pin.edited,
                "now": now,
            }
            for pin, now in zip(edit.pins, settled.now or (None,) * len(edit.pins), strict=True)
        ],
    }
