"""The fleet report as one self-contained HTML page: no scripts, fonts or images from elsewhere;
colours for errors and warnings; the drift table with the differing columns marked; each node's
details folded in a <details> element. Pure: a FleetReport in, a page out."""

from __future__ import annotations

from html import escape

from lockguard.fleet import columns
from lockguard.fleet.groups import MATCHES, FleetReport, Group
from lockguard.fleet.records import OK, NodeReport
from lockguard.fleet.render import status_text, summary

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f24}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa}
tr.differs th,tr.differs td{background:#fff8c5}
.ok{color:#1a7f37}.error{color:#cf222e;font-weight:600}.warning{color:#9a6700;font-weight:600}
.deviates{background:#ffebe9}.matches{background:#dafbe1}
code{font:12px ui-monospace,monospace}
details{margin:.15em 0}summary{cursor:pointer}
dl{margin:.3em 0 .6em 1.5em}dt{font-weight:600}dd{margin:0 0 .3em 1em}
"""


def page(report: FleetReport) -> str:
    lock = escape(report.lock or "none")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>lockguard fleet report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>lockguard fleet report</h1>",
        f"<p>{escape(summary(report))}.</p>",
        f"<p>lock: <code>{lock}</code> {escape(report.lock_source)}</p>",
    ]
    parts += _groups(report.groups)
    shown = [g for g in report.groups if g.kind == OK]
    if shown:
        parts += _drift_table(shown, report.differing)
    parts += _fixes([g for g in report.groups if g.fixes])
    if report.unreadable:
        parts.append("<h2>Unreadable reports (not merged)</h2><ul>")
        parts += [
            f'<li class="error"><code>{escape(file)}</code>: {escape(why)}</li>'
            for file, why in report.unreadable
        ]
        parts.append("</ul>")
    parts += _nodes(report.groups)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _groups(groups: list[Group]) -> list[str]:
    out = [
        "<h2>Groups</h2>",
        "<table><thead><tr><th>group</th><th>nodes</th><th>count</th><th>status</th>"
        "<th>fingerprint</th></tr></thead><tbody>",
    ]
    for group in groups:
        out.append(
            f'<tr class="{group.status}"><td>{group.label}</td>'
            f"<td><code>{escape(group.nodeset)}</code></td>"
            f"<td>{len(group.nodes)}</td><td>{escape(status_text(group))}</td>"
            f"<td><code>{escape(columns.short_hash(group.fingerprint))}</code></td></tr>"
        )
    out.append("</tbody></table>")
    return out


def _drift_table(groups: list[Group], differing: list[str]) -> list[str]:
    out = [
        "<h2>Drift table</h2>",
        "<p>Highlighted rows (marked *) differ between groups.</p>",
        "<table><thead><tr><th>column</th>"
        + "".join(f"<th>{g.label} <code>{escape(g.nodeset)}</code></th>" for g in groups)
        + "</tr></thead><tbody>",
    ]
    for column in columns.COLUMNS:
        differs = column.key in differing
        cells = "".join(f"<td>{_cell(column.key, g.row[column.key])}</td>" for g in groups)
        attribute = ' class="differs"' if differs else ""
        out.append(
            f"<tr{attribute}><th>{escape(column.label)}{' *' if differs else ''}</th>{cells}</tr>"
        )
    out.append("</tbody></table>")
    return out


def _cell(key: str, value: str) -> str:
    if key != "findings" or value == "none":
        return escape(value)
    return ", ".join(
        f'<span class="{_severity(item)}">{escape(item)}</span>' for item in value.split(", ")
    )


def _severity(item: str) -> str:
    return "error" if item.endswith(" error") else "warning" if item.endswith(" warning") else ""


def _fixes(groups: list[Group]) -> list[str]:
    if not groups:
        return []
    out = ["<h2>How to fix</h2>"]
    for group in groups:
        out.append(f"<h3>{group.label} <code>{escape(group.nodeset)}</code></h3><ul>")
        for fix in group.fixes:
            where = f" (on <code>{escape(fix.nodes)}</code>)" if fix.nodes else ""
            hint = f"<br>fix: {escape(fix.hint)}" if fix.hint else ""
            out.append(
                f'<li><span class="{escape(fix.severity)}">{escape(fix.code)} '
                f"{escape(fix.severity)}</span>"
                f"{where}: {escape(fix.message)}{hint}</li>"
            )
        out.append("</ul>")
    return out


def _nodes(groups: list[Group]) -> list[str]:
    out = ["<h2>Nodes</h2>"]
    for group in groups:
        for node in group.nodes:
            out.append(_node(node, group))
    return out


def _node(node: NodeReport, group: Group) -> str:
    css = "ok" if group.status == MATCHES else "error" if node.errors else "warning"
    rows = [("group", f"{group.label}: {status_text(group)}"), ("report", node.file)]
    if node.reported_node:
        rows.append(("doctor's name for it", node.reported_node))
    rows += [
        (label, value)
        for label, value in (
            ("time", node.time),
            ("lockguard", node.lockguard),
            ("python", node.python),
            ("engine", node.engine),
            ("fingerprint", node.fingerprint),
        )
        if value
    ]
    items = "".join(
        f"<dt>{escape(label)}</dt><dd>{escape(str(value))}</dd>" for label, value in rows
    )
    findings = "".join(
        f'<li><span class="{escape(f.severity)}">{escape(f.code)} {escape(f.severity)}</span>: '
        f"{escape(f.message)}</li>"
        for f in node.findings
    )
    return (
        f'<details><summary><span class="{css}">{escape(node.node)}</span> '
        f"({group.label})</summary>"
        f"<dl>{items}</dl>" + (f"<ul>{findings}</ul>" if findings else "") + "</details>"
    )
