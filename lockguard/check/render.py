"""Findings as text (grouped, with hints), a JSON envelope body, or GitHub annotations."""

from __future__ import annotations

import os

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


def github(findings: list[Finding], *, cwd: str, root: str) -> str:
    """GitHub Actions workflow commands: ::error file=F,line=L,title=CODE::message. GitHub reads
    `file=` relative to the repository (`root`); a finding's file is relative to `cwd`. A file
    outside the repository (a system library) gets no `file=`: it would attach to nothing."""
    out = []
    for finding in findings:
        level = (
            "error"
            if finding.severity == ERROR
            else "warning"
            if finding.severity == "warning"
            else "notice"
        )
        message = finding.message + (f" (hint: {finding.hint})" if finding.hint else "")
        where = _in_repository(finding.file, cwd, root) if finding.file else None
        out.append(_annotation(level, finding.code, message, where, finding.line))
    return "".join(out)


def github_error(message: str, *, file: str | None, line: int | None, cwd: str, root: str) -> str:
    """An error that stopped the command (exit 2) as one annotation, placed as findings are."""
    where = _in_repository(file, cwd, root) if file else None
    return _annotation("error", "lockguard", message, where, line)


def _annotation(level: str, title: str, message: str, file: str | None, line: int | None) -> str:
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={title}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}\n"


def _in_repository(file: str, cwd: str, root: str) -> str | None:
    """`file` (relative to `cwd`, or absolute) relative to `root`; None outside it. Text only:
    both folders are absolute."""
    path = os.path.normpath(os.path.join(cwd, file))
    top = os.path.normpath(root)
    return path[len(top) :].lstrip(os.sep) if path.startswith(top.rstrip(os.sep) + os.sep) else None


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")
