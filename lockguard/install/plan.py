"""The plan of a clean-install: what moves to quarantine (and why), what pip installs and
uninstalls, which conda records are installed, and what is only reported (outside the prefix).
Pure: built from an Inventory; printed by --dry-run, executed by apply."""

from __future__ import annotations

from dataclasses import dataclass, field

from lockguard.install.inventory import Inventory, QuarantineItem
from lockguard.model.finding import Finding

# findings a clean-install can fix inside the prefix; the rest are reported only
FIXABLE = {"LG200", "LG201", "LG202", "LG210", "LG211", "LG212", "LG215", "LG216", "LG220", "LG230"}


@dataclass
class Plan:
    prefix: str
    python: str
    requirements: str
    quarantine: list[QuarantineItem] = field(default_factory=list)
    install: list[str] = field(default_factory=list)
    uninstall: list[str] = field(default_factory=list)
    conda: list[str] = field(default_factory=list)
    reported: list[Finding] = field(default_factory=list)

    @property
    def changes_nothing(self) -> bool:
        return not (self.quarantine or self.install or self.uninstall or self.conda)

    def to_dict(self) -> dict:
        return {
            "prefix": self.prefix, "python": self.python, "requirements": self.requirements,
            "quarantine": [{"path": q.path, "reason": q.reason, "owner": q.owner, "code": q.code} for q in self.quarantine],
            "install": self.install, "uninstall": self.uninstall, "conda": self.conda,
            "reported": [f.to_dict() for f in self.reported],
        }

    def text(self) -> str:
        lines = [f"plan for {self.prefix} (python {self.python})"]
        if self.changes_nothing:
            lines.append("  nothing to change: the environment matches the lock")
        if self.quarantine:
            lines.append(f"  quarantine {len(self.quarantine)} files (moved, never deleted; `lockguard restore` undoes):")
            lines += [f"    {q.path}  ({q.reason})" for q in self.quarantine]
        if self.install:
            lines.append(f"  install from {self.requirements} (pip --require-hashes --no-deps): " + ", ".join(self.install))
        if self.uninstall:
            lines.append("  uninstall (not in the lock): " + ", ".join(self.uninstall))
        if self.conda:
            lines.append("  conda records to install: " + ", ".join(self.conda))
        if self.reported:
            lines.append("  outside the prefix (reported, never changed):")
            lines += [f"    {f.code} {f.message}" + (f"\n      hint: {f.hint}" if f.hint else "") for f in self.reported]
        return "\n".join(lines) + "\n"


def make_plan(inventory: Inventory, *, prefix: str, python: str, requirements: str) -> Plan:
    plan = Plan(prefix, python, requirements)
    seen: set[str] = set()
    for item in inventory.quarantine:
        if item.path not in seen:
            seen.add(item.path)
            plan.quarantine.append(item)
    plan.install = sorted(set(inventory.missing))
    plan.uninstall = sorted(set(inventory.extra))
    plan.conda = sorted(set(inventory.conda_missing))
    plan.reported = [f for f in inventory.findings if f.code not in FIXABLE and f.severity != "info"]
    return plan


def blocking(findings: list[Finding]) -> list[Finding]:
    """Findings that must be gone after an apply (otherwise: roll back, exit 5)."""
    return [f for f in findings if f.code in FIXABLE]
