"""The fleet report as text (groups, the drift table with the differing columns marked, the fixes)
and as the data of the JSON envelope. Pure: a FleetReport in, text or a dict out."""

from __future__ import annotations

from lockguard.fleet import columns
from lockguard.fleet.groups import MATCHES, FleetReport, Group
from lockguard.fleet.nodeset import fold
from lockguard.fleet.records import OK
from lockguard.model.json_types import JsonObject

FLEET_SCHEMA = 1
TABLE_GROUPS = 3  # groups side by side in one drift table; more groups make more tables


def summary(report: FleetReport) -> str:
    total, groups = report.node_count, len(report.groups)
    deviating = len(report.deviating)
    return (
        f"{total} node{'s' * (total != 1)} in {groups} group{'s' * (groups != 1)}; "
        f"{report.matching} match{'es' * (report.matching == 1)} the lock, {deviating} deviate"
        f"{'s' * (deviating == 1)}"
    )


def status_text(group: Group) -> str:
    if group.status == MATCHES:
        return "matches the lock" + (f" ({'; '.join(group.notes)})" if group.notes else "")
    return "deviates: " + "; ".join(group.reasons + group.notes)


def text(report: FleetReport) -> str:
    lines = [f"lockguard fleet report: {summary(report)}"]
    lock = columns.short_hash(report.lock) if report.lock else "none"
    lines.append(f"lock: {lock}" + (f" ({report.lock_source})" if report.lock_source else ""))
    if report.groups:
        lines += ["", "groups:"]
        for group in report.groups:
            count = f"{len(group.nodes)} node{'s' * (len(group.nodes) != 1)}"
            fingerprint = (
                f"  [{columns.short_hash(group.fingerprint)}]" if group.fingerprint else ""
            )
            fits = f"  profile {group.profile}" if group.profile else ""
            lines.append(f"  {group.label:<2} {count:>11}  {status_text(group)}{fingerprint}{fits}")
            lines.append(f"     {group.nodeset}")
    shown = [g for g in report.groups if g.kind == OK]
    if shown:
        lines += ["", "drift table (* marks a column that differs between groups):"]
        for start in range(0, len(shown), TABLE_GROUPS):
            lines += _table(shown[start : start + TABLE_GROUPS], report.differing)
    deviating = [g for g in report.groups if g.status != MATCHES]
    to_fix = [g for g in report.groups if g.fixes]
    if to_fix:
        lines += ["", "how to fix:"]
        for group in to_fix:
            lines.append(f"  {group.label} {group.nodeset}:")
            for fix in group.fixes:
                where = f" (on {fix.nodes})" if fix.nodes else ""
                lines.append(f"    {fix.code} {fix.severity}{where}: {fix.message}")
                if fix.hint:
                    lines.append(f"      fix: {fix.hint}")
    if deviating:
        lines += ["", f"deviating: {fold(report.deviating)}"]
    if report.duplicates:
        lines += ["", "reported more than once:"] + [f"  {note}" for note in report.duplicates]
    if report.unreadable:
        lines += ["", "unreadable reports (not merged):"] + [
            f"  {file}: {why}" for file, why in report.unreadable
        ]
    return "\n".join(lines) + "\n"


def _table(groups: list[Group], differing: list[str]) -> list[str]:
    labels = [c.label for c in columns.COLUMNS]
    label_width = max(len(label) for label in labels)
    cells = [[g.row[c.key] for g in groups] for c in columns.COLUMNS]
    widths = [max(len(g.label), *(len(row[i]) for row in cells)) for i, g in enumerate(groups)]
    header = (
        "    "
        + " " * label_width
        + "  "
        + "  ".join(g.label.ljust(w) for g, w in zip(groups, widths, strict=True))
    )
    out = ["", header.rstrip()]
    for column, row in zip(columns.COLUMNS, cells, strict=True):
        mark = "*" if column.key in differing else " "
        values = "  ".join(value.ljust(w) for value, w in zip(row, widths, strict=True))
        out.append(f"  {mark} {column.label.ljust(label_width)}  {values}".rstrip())
    return out


def json_data(report: FleetReport) -> JsonObject:
    return {
        "fleet_schema": FLEET_SCHEMA,
        "nodes": report.node_count,
        "matching": report.matching,
        "lock": {"body_hash": report.lock, "source": report.lock_source},
        "columns": [
            {"key": c.key, "label": c.label, "differs": c.key in report.differing}
            for c in columns.COLUMNS
        ],
        "groups": [_group_data(g) for g in report.groups],
        "deviating": report.deviating,
        "unreadable": [{"file": file, "message": why} for file, why in report.unreadable],
        "duplicates": report.duplicates,
    }


def _group_data(group: Group) -> JsonObject:
    first = group.nodes[0]
    return {
        "label": group.label,
        "nodes": group.names,
        "nodeset": group.nodeset,
        "count": len(group.nodes),
        "kind": group.kind,
        "status": group.status,
        "profile": group.profile,
        "reasons": group.reasons,
        "notes": group.notes,
        "fingerprint": group.fingerprint,
        "facts": first.drift if group.kind == OK else None,
        "row": group.row or None,
        "findings": [
            {
                "code": f.code,
                "severity": f.severity,
                "message": f.message,
                "hint": f.hint,
                "nodes": f.nodes,
            }
            for f in group.fixes
        ],
    }
