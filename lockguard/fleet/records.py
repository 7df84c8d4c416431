"""Per-node reports as `fleet report` reads them, from any source:

- the envelope `lockguard doctor --json` prints, or its bare `data` record (doctor_schema 1);
- a fleet node record, as `fleet run` writes DIR/<node>.json (fleet_node 1): the node's name as the
  engine knows it, the doctor record, the `check --env` result, or why the node gave none
  (unreachable, failed).

Only what the merge needs is kept from each record (10,000 nodes must fit in a few hundred MB).
Pure: parsed JSON in, NodeReport out; a record that is not one of these raises Malformed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from lockguard.model import codes
from lockguard.model.json_types import JsonObject

DOCTOR_SCHEMA = 1  # the doctor record layout this merge reads (README, "The doctor's JSON record")
FLEET_NODE_SCHEMA = 1
OK, UNREACHABLE, FAILED = "ok", "unreachable", "failed"
SEVERITIES = ("error", "warning", "info")


# the doctor's "installed versions differ from the lock"
LOCK_SUMMARY = codes.INSTALLED_DIFFERS.code
UNREACHABLE_HINT = (
    "check that the node is up and that its engine (raylet, slurmd, sshd, kubelet) answers; "
    "raise --timeout when doctor needs longer there (import torch from a cold filesystem)"
)
FAILED_HINT = "run `lockguard doctor --json` by hand on that node to see the whole error"


class Malformed(ValueError):
    """A report that is not a doctor record, a doctor envelope or a fleet node record."""


@dataclass(frozen=True)
class NodeFinding:
    code: str
    severity: str
    message: str
    hint: str | None

    def to_dict(self) -> JsonObject:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass(slots=True)  # not frozen: 10,000 frozen inits cost a tenth of a second for nothing
class NodeReport:
    node: str
    file: str
    status: str  # ok | unreachable | failed
    message: str | None = None  # why an unreachable or failed node gave no report
    fingerprint: str | None = None
    drift: JsonObject = field(default_factory=dict)
    findings: tuple[NodeFinding, ...] = ()
    lock_hash: str | None = None
    lock_reason: str | None = None
    time: str | None = None
    lockguard: str | None = None
    python: str | None = None
    reported_node: str | None = None  # the doctor's own name for the node, when it differs
    engine: str | None = None
    profile: str | None = None  # the intent's profile the node's doctor compared with

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


def node_report(data: object, *, file: str, default_node: str) -> NodeReport:
    """One parsed JSON document -> its NodeReport (raises Malformed, saying what is wrong)."""
    if not isinstance(data, dict):
        raise Malformed(f"expected a JSON object, found {type(data).__name__}")
    if "fleet_node" in data:
        return _fleet_node(data, file)
    if "doctor_schema" in data:
        return _doctor(data, file=file)
    if data.get("command") == "doctor":
        if isinstance(data.get("data"), dict):
            return _doctor(data["data"], file=file)
        error = data.get("error")
        if not isinstance(error, dict):
            error = {}
        return NodeReport(
            node=default_node,
            file=file,
            status=FAILED,
            message=f"doctor failed: {error.get('message') or 'no data in its envelope'}",
        )
    raise Malformed(
        "not a lockguard doctor report (no doctor_schema, no doctor envelope, no fleet_node)"
    )


def _fleet_node(data: JsonObject, file: str) -> NodeReport:
    if data.get("fleet_node") != FLEET_NODE_SCHEMA:
        raise Malformed(
            f"fleet_node {data.get('fleet_node')!r}: "
            f"this lockguard reads fleet_node {FLEET_NODE_SCHEMA}"
        )
    node = _text(data, "node")
    status = data.get("status")
    if status not in (OK, UNREACHABLE, FAILED):
        raise Malformed(f"status {status!r}: expected ok, unreachable or failed")
    if status != OK:
        message = str(data.get("message") or status)
        code = codes.NODE_UNREACHABLE if status == UNREACHABLE else codes.NODE_FAILED
        hint = data.get("hint") or (UNREACHABLE_HINT if status == UNREACHABLE else FAILED_HINT)
        return NodeReport(
            node=node,
            file=file,
            status=status,
            message=message,
            engine=data.get("engine"),
            findings=(NodeFinding(code.code, code.severity, f"{status}: {message}", hint),),
        )
    if not isinstance(data.get("doctor"), dict):
        raise Malformed("status ok without a doctor record")
    report = _doctor(data["doctor"], file=file, node=node, engine=data.get("engine"))
    check = data.get("check")
    if check is None:
        return report
    if not isinstance(check, dict) or not isinstance(check.get("findings"), list):
        raise Malformed("check: expected the `check --env` result with its findings")
    extra = tuple(
        _finding(item, f"check.findings[{i}]") for i, item in enumerate(check["findings"])
    )
    # `check --env` names each package that differs (LG200-LG2xx): the doctor's summary of the same
    # drift (LG310, "N packages differ from the lock") would list it twice
    kept = tuple(f for f in report.findings if f.code != LOCK_SUMMARY)
    return _replace(report, findings=kept + extra)


def _doctor(
    record: JsonObject, *, file: str, node: str | None = None, engine: str | None = None
) -> NodeReport:
    schema = record.get("doctor_schema")
    if schema != DOCTOR_SCHEMA:
        raise Malformed(
            f"doctor_schema {schema!r}: this lockguard reads doctor_schema {DOCTOR_SCHEMA} "
            "(run the same lockguard version on the nodes and here)"
        )
    reported = _text(record, "node")
    drift = record.get("drift")
    if not isinstance(drift, dict):
        raise Malformed("drift: expected an object of drift columns")
    findings = record.get("findings")
    if not isinstance(findings, list):
        raise Malformed("findings: expected a list")
    lock = record.get("lock")
    if lock is not None and not isinstance(lock, dict):
        raise Malformed("lock: expected an object or null")
    if "interpreter" not in drift:  # which interpreter the doctor probed: a row of the drift table
        drift = {**drift, "interpreter": record.get("python")}
    return NodeReport(
        node=node or reported,
        file=file,
        status=OK,
        fingerprint=_text(record, "fingerprint"),
        drift=drift,
        findings=tuple(_finding(item, f"findings[{i}]") for i, item in enumerate(findings)),
        lock_hash=(lock or {}).get("body_hash") or drift.get("lock_body_hash"),
        lock_reason=record.get("lock_reason"),
        time=record.get("time"),
        lockguard=record.get("lockguard"),
        python=record.get("python"),
        reported_node=reported if node and node != reported else None,
        engine=engine,
        profile=_profile((lock or {}).get("profile")),
    )


def _finding(item: object, where: str) -> NodeFinding:
    if not isinstance(item, dict) or not isinstance(item.get("code"), str):
        raise Malformed(f"{where}: expected a finding with a code")
    severity = item.get("severity")
    if severity not in SEVERITIES:
        raise Malformed(f"{where}: severity {severity!r} is not one of {', '.join(SEVERITIES)}")
    return NodeFinding(item["code"], severity, str(item.get("message") or ""), item.get("hint"))


def _text(data: JsonObject, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise Malformed(f"{key}: expected a non-empty string, found {value!r}")
    return value


def _replace(report: NodeReport, **changes: Any) -> NodeReport:
    return replace(report, **changes)  # a copy: a report is never changed in place


# -- what `fleet run` writes per node -------------------------------------------------------------


def fleet_node_record(
    node: str,
    *,
    engine: str,
    status: str,
    message: str | None = None,
    hint: str | None = None,
    doctor: JsonObject | None = None,
    check: JsonObject | None = None,
) -> JsonObject:
    return {
        "fleet_node": FLEET_NODE_SCHEMA,
        "node": node,
        "engine": engine,
        "status": status,
        "message": message,
        "hint": hint,
        "doctor": doctor,
        "check": check,
    }


def _profile(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Malformed("lock.profile: expected a string")
    return value
