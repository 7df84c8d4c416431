"""Findings as text (grouped, with hints), a JSON envelope body, or GitHub annotations."""

from __future__ import annotations

from lockguard.model.finding import ERROR, Finding, counts
from lockguard.model.wording import counted


def text(findings: list[Finding], *, checked: str) -> str:
    if not findings:
        return f"ok: {checked}: no findings\n"
    lines: list[str] = []
    current = object()
    for finding in findings:
        if finding.file != current:
            current = finding.file
            lines.append(f"{finding.file or '(project)'}")
        where = f"{finding.line}: " if finding.line else ""
        lines.append(f"  {where}{finding.code} {finding.severity}: {finding.message}")
        if finding.hint:
            lines.append(f"      hint: {finding.hint}")
    total = counts(findings)
    lines.append(
        f"{counted(len(findings), 'finding')} ({counted(total['error'], 'error')}, "
        f"{counted(total['warning'], 'warning')}): {checked}"
    )
    return "\n".join(lines) + "\n"


def json_data(findings: list[Finding], *, checked: str) -> dict[str, object]:
    return {
        "checked": checked,
        "counts": counts(findings),
        "findings": [f.to_dict() for f in findings],
    }


def github(findings: list[Finding]) -> str:
    """GitHub Actions workflow commands: ::error file=F,line=L,title=CODE::message"""
    out = []
    for finding in findings:
        level = (
            "error"
            if finding.severity == ERROR
            else "warning"
            if finding.severity == "warning"
            else "notice"
        )
        props = []
        if finding.file:
            props.append(f"file={_escape_property(finding.file)}")
        if finding.line:
            props.append(f"line={finding.line}")
        props.append(f"title={finding.code}")
        message = finding.message + (f" (hint: {finding.hint})" if finding.hint else "")
        out.append(f"::{level} {','.join(props)}::{_escape_data(message)}")
    return "\n".join(out) + ("\n" if out else "")


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")
