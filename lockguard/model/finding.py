"""Diagnostics as data: a stable code, a severity, what is wrong, how to fix it, and where."""

from __future__ import annotations

from dataclasses import dataclass, fields

ERROR = "error"
WARNING = "warning"
INFO = "info"
_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


@dataclass(frozen=True, slots=True)
class Finding:
    code: str  # stable: LG1xx static lock checks, LG2xx installed environment, LG3xx doctor
    severity: str
    message: str
    hint: str | None = None
    file: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, str | int]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (
            self.file or "",
            self.line or 0,
            _ORDER.get(self.severity, 9),
            self.code,
            self.message,
        )


def counts(findings: list[Finding]) -> dict[str, int]:
    out = {ERROR: 0, WARNING: 0, INFO: 0}
    for finding in findings:
        out[finding.severity] = out.get(finding.severity, 0) + 1
    return out


def failing(findings: list[Finding]) -> bool:
    """Errors and warnings fail a check; info findings only inform."""
    return any(f.severity in (ERROR, WARNING) for f in findings)
