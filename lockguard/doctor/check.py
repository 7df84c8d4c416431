"""One doctor check's outcome, and the facts every check reads. Pure data.

A check is ok, warn, error or skip; a skip gives the one reason that applies; a warn or error
carries a Finding with the fix.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lockguard.model import codes
from lockguard.model.codes import FindingCode
from lockguard.model.finding import ERROR, WARNING, Finding
from lockguard.model.json_types import JsonObject
from lockguard.model.probe import ProbeResult
from lockguard.model.system_facts import SystemFacts
from lockguard.model.target import MachineFacts
from lockguard.model.versions import CudaVersion

if TYPE_CHECKING:  # only types here: doctor without a lock never loads the install inventory
    from lockguard.install.lock_diff import LockView
    from lockguard.knowledge.tables import Knowledge


@dataclass
class Check:
    id: str
    title: str
    status: str  # ok | warn | error | skip
    detail: str
    finding: Finding | None = None
    evidence: tuple[str, ...] = ()  # lines that back the detail: a traceback tail, the stderr tail

    def to_dict(self) -> JsonObject:
        return {
            "code": self.id,
            "title": self.title,
            "status": self.status,
            "severity": self.finding.severity if self.finding else None,
            "message": self.detail,
            "hint": self.finding.hint if self.finding else None,
            "evidence": list(self.evidence),
        }


def ok(id_: str, title: str, detail: str) -> Check:
    return Check(id_, title, "ok", detail)


def skip(id_: str, title: str, reason: str) -> Check:
    return Check(id_, title, "skip", reason)


def flag(
    code: FindingCode,
    title: str,
    message: str,
    hint: str,
    evidence: tuple[str, ...] = (),
    *,
    severity: str | None = None,
) -> Check:
    """A failed check whose finding has the registry's severity for `code` (or one of the cases the
    registry names for it): the severity every other command reports it with."""
    finding = code.finding(message, hint, severity=severity)
    return Check(code.code, title, _status(finding.severity), message, finding, evidence)


def _status(severity: str) -> str:
    return "error" if severity == ERROR else "warn" if severity == WARNING else "ok"


def cuda_of(text: str | None) -> CudaVersion | None:
    try:
        return CudaVersion.parse(text).major_minor if text else None
    except ValueError:
        return None


@dataclass
class Facts:
    """Everything the checks judge: the probe's report from the target interpreter, NVML, the
    system CUDA facts, the lock (or why there is none) and the knowledge."""

    probe: ProbeResult
    machine: MachineFacts
    system: SystemFacts
    lock: LockView | None
    knowledge: Knowledge
    alive: dict[int, bool | None] = field(default_factory=dict)
    lock_reason: str = "no lockguard.toml in this directory; pass --intent FILE"
    smoke_requested: bool = False

    @property
    def dists(self) -> dict[str, str]:
        value = self.probe.base.get("distributions")
        return (
            {k: v for k, v in value.items() if isinstance(v, str)}
            if isinstance(value, dict)
            else {}
        )

    @property
    def duplicates(self) -> dict[str, list[JsonObject]]:
        """name -> its dist-infos in one folder ({version, dist_info, live}), where several."""
        value = self.probe.base.get("duplicates")
        if not isinstance(value, dict):
            return {}
        return {
            name: [c for c in copies if isinstance(c, dict) and isinstance(c.get("version"), str)]
            for name, copies in value.items()
            if isinstance(copies, list)
        }

    @property
    def clean_install(self) -> str:
        """The clean-install command for this environment, as a fix says it: the bare command is
        exit 2 (it needs --python or --prefix)."""
        python = self.probe.base.get("python")
        executable = python.get("executable") if isinstance(python, dict) else None
        target = shlex.quote(executable) if isinstance(executable, str) and executable else "PATH"
        return f"`lockguard clean-install --python {target}`"

    @property
    def torch(self) -> JsonObject:
        return (
            self.probe.torch if self.probe.torch and self.probe.torch.get("state") == "ok" else {}
        )

    @property
    def torch_state(self) -> str:
        """ok | missing | broken | unknown (the probe failed before it could tell)."""
        if self.probe.importing and self.probe.importing.get("dist") == "torch":
            return "broken"  # `import torch` killed the probe
        if not self.probe.base:
            return "unknown"
        state = (self.probe.torch or {}).get("state")
        return state if state in ("ok", "missing", "broken") else "unknown"

    @property
    def torch_cuda(self) -> CudaVersion | None:
        return cuda_of(self.torch.get("cuda"))

    def torch_unusable(self) -> str | None:
        """The one reason torch's facts are not there, or None when they are."""
        return {
            "ok": None,
            "missing": "torch is not installed",
            "broken": f"torch is installed but fails to import ({codes.IMPORT_FAILS.code})",
            "unknown": f"the probe did not report torch ({codes.IMPORT_FAILS.code})",
        }[self.torch_state]

    def wanted_cuda(self) -> tuple[CudaVersion, str] | None:
        """The CUDA the environment is meant to run: the lock's, else torch's build."""
        locked = cuda_of(self.lock.cuda) if self.lock else None
        if locked:
            return locked, "the lock's"
        if self.torch_cuda:
            return self.torch_cuda, "torch's"
        return None

    def no_cuda_reference(self) -> str:
        """Why wanted_cuda() is None, as one reason."""
        if self.lock is not None:
            return "the lock names no CUDA version"
        state = self.torch_unusable()
        return f"no lock, and {state}" if state else "no lock, and torch is a CPU build"
