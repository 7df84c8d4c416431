"""Merge per-node reports: nodes grouped by fingerprint, each group's drift row, the columns that
differ between groups, which groups match the lock, and the fixes of those that do not. Pure.

A group holds nodes with the same doctor fingerprint whose drift rows are also the same: the
fingerprint hashes only what must agree across a fleet, so nodes of one fingerprint whose findings,
/dev/shm or paths differ are shown as separate groups (with the same fingerprint).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lockguard.fleet import columns
from lockguard.fleet.nodeset import fold, natural_key
from lockguard.fleet.records import OK, UNREACHABLE, NodeReport

MATCHES, DEVIATES = "matches", "deviates"
NO_LOCK_HINT = (
    "run doctor against the project's lock: `lockguard fleet run --intent PATH` "
    "with a lockguard.toml "
    "the nodes can read (a shared filesystem), or `lockguard doctor --intent PATH` on the node"
)
OTHER_LOCK_HINT = (
    "the node read another copy of the project: point it at the same lockguard.toml and lock files"
)


@dataclass(frozen=True)
class Fix:
    code: str
    severity: str
    message: str
    hint: str | None
    nodes: str | None  # the node set with this finding, None when every node of the group has it


@dataclass
class Group:
    label: str
    nodes: list[NodeReport]
    nodeset: str
    kind: str  # ok | unreachable | failed
    fingerprint: str | None
    row: dict[str, str]
    status: str = MATCHES
    reasons: list[str] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    # warnings: shown with their fixes, not a deviation
    notes: list[str] = field(default_factory=list)
    profile: str | None = None  # a project with [profiles]: the profile these nodes fit

    @property
    def names(self) -> list[str]:
        return [n.node for n in self.nodes]


@dataclass
class FleetReport:
    groups: list[Group]
    lock: str | None  # the lock the fleet is judged against (a body hash)
    lock_source: str
    differing: list[str]  # column keys whose value differs between groups
    deviating: list[str]
    unreadable: list[tuple[str, str]]  # (file, what is wrong)
    duplicates: list[str]  # notes on nodes reported more than once

    @property
    def node_count(self) -> int:
        return sum(len(g.nodes) for g in self.groups)

    @property
    def matching(self) -> int:
        return sum(len(g.nodes) for g in self.groups if g.status == MATCHES)

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return 2
        return 1 if self.deviating or not self.groups else 0


def merge(
    reports: list[NodeReport],
    *,
    unreadable: list[tuple[str, str]] | None = None,
    lock: str | None = None,
    lock_source: str | None = None,
    strict: bool = False,
    profile_locks: Mapping[str, str] | None = None,
) -> FleetReport:
    """Group the nodes by fingerprint and judge each group: it deviates when a node could not be
    reached or failed, compared with no lock or another lock, or has an error; with `strict`, a
    warning (a foreign NCCL the loader can reach, /usr/local/cuda of another CUDA) deviates too."""
    reports, duplicates = _latest_per_node(reports)
    if lock is None and profile_locks is None:
        lock, lock_source = _majority_lock(reports)
    buckets: dict[tuple[Any, ...], list[NodeReport]] = defaultdict(list)
    rows: dict[tuple[Any, ...], dict[str, str]] = {}
    for report in reports:
        if report.status == OK:
            shown = tuple(
                sorted(
                    {
                        f"{f.code} {f.severity}"
                        for f in report.findings
                        if f.severity in ("error", "warning")
                    }
                )
            )
            # nodes agree on every fingerprint key; the rest of what the row shows is compared here
            key = (
                OK,
                report.profile,
                report.fingerprint,
                shown,
                *(_text(report.drift.get(k)) for k in columns.NOT_FINGERPRINTED),
            )
            if key not in rows:
                rows[key] = columns.row(report.drift, list(shown))
        else:
            key = (report.status, report.message)
            rows[key] = {}
        buckets[key].append(report)
    # with [profiles], each group is judged against the lock of the profile its nodes fit (nodes
    # that fit none compared with no lock: their doctor says why)
    groups = [
        _group(
            key,
            members,
            rows[key],
            lock if profile_locks is None else profile_locks.get(members[0].profile or ""),
            strict,
        )
        for key, members in buckets.items()
    ]
    groups.sort(
        key=lambda g: (
            g.kind != OK,
            g.kind == UNREACHABLE,
            g.status != MATCHES,
            -len(g.nodes),
            natural_key(g.nodes[0].node),
        )
    )
    for index, group in enumerate(groups):
        group.label = _label(index)
    ok_groups = [g for g in groups if g.kind == OK]
    differing = [c.key for c in columns.COLUMNS if len({g.row[c.key] for g in ok_groups}) > 1]
    deviating = sorted(
        (n.node for g in groups if g.status == DEVIATES for n in g.nodes), key=natural_key
    )
    return FleetReport(
        groups, lock, lock_source or "", differing, deviating, list(unreadable or []), duplicates
    )


def _text(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _group(
    key: tuple[Any, ...],
    members: list[NodeReport],
    row: dict[str, str],
    lock: str | None,
    strict: bool,
) -> Group:
    members.sort(key=lambda n: natural_key(n.node))
    first = members[0]
    group = Group("", members, fold(n.node for n in members), first.status, first.fingerprint, row)
    group.profile = first.profile
    if first.status != OK:
        group.status = DEVIATES
        group.reasons.append(f"{first.status}: {first.message}")
        group.fixes = _fixes(members)
        return group
    if first.lock_hash is None:
        group.reasons.append(
            f"no lock compared ({first.lock_reason})" if first.lock_reason else "no lock compared"
        )
    elif lock and first.lock_hash != lock:
        group.reasons.append(
            f"compared with another lock ({columns.short_hash(first.lock_hash)}, the fleet's is "
            f"{columns.short_hash(lock)})"
        )
    errors, warnings = first.errors, first.warnings
    if errors:
        group.reasons.append(f"{errors} error{'s' * (errors != 1)}")
    # without --strict, a node that matches the lock with no error matches, warnings and all
    if warnings:
        (group.reasons if strict else group.notes).append(
            f"{warnings} warning{'s' * (warnings != 1)}"
        )
        group.fixes = _fixes(members)
    if group.reasons:
        group.status = DEVIATES
        group.fixes = _fixes(members)
        if first.lock_hash is None:
            group.fixes.insert(0, Fix("lock", "error", "no lock compared", NO_LOCK_HINT, None))
        elif lock and first.lock_hash != lock:
            group.fixes.insert(0, Fix("lock", "error", "another lock", OTHER_LOCK_HINT, None))
    return group


def _fixes(members: list[NodeReport]) -> list[Fix]:
    """Each distinct problem (code, severity, fix) once, with the nodes that have it when not all of
    them do; when its message differs between nodes, the most common one and how many others."""
    holders: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    messages: dict[tuple[Any, ...], Counter[str]] = defaultdict(Counter)
    for member in members:
        for finding in member.findings:
            if finding.severity in ("error", "warning"):
                key = (finding.code, finding.severity, finding.hint)
                if not holders[key] or holders[key][-1] != member.node:
                    holders[key].append(member.node)
                messages[key][finding.message] += 1
    order = {"error": 0, "warning": 1}
    fixes = []
    for (code, severity, hint), names in holders.items():
        counted = messages[(code, severity, hint)]
        message = min(counted, key=lambda m: (-counted[m], m))
        if len(counted) > 1:
            message += (
                f" (and {len(counted) - 1} other message{'s' * (len(counted) > 2)}: "
                "see each node's details)"
            )
        fixes.append(
            Fix(code, severity, message, hint, None if len(names) == len(members) else fold(names))
        )
    return sorted(fixes, key=lambda f: (order.get(f.severity, 2), f.code, f.message))


def _majority_lock(reports: list[NodeReport]) -> tuple[str | None, str]:
    counts = Counter(r.lock_hash for r in reports if r.status == OK and r.lock_hash)
    if not counts:
        return None, "no node compared itself with a lock"
    lock, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
    total = sum(1 for r in reports if r.status == OK)
    return lock, f"the lock {count} of {total} answering nodes compared with"


def _latest_per_node(reports: list[NodeReport]) -> tuple[list[NodeReport], list[str]]:
    """A node reported twice (two runs copied into one folder) counts once: its newest report."""
    kept: dict[str, NodeReport] = {}
    repeated: dict[str, list[NodeReport]] = {}
    for report in reports:
        if report.node in kept:
            repeated.setdefault(report.node, [kept[report.node]]).append(report)
        kept[report.node] = report
    notes = []
    for node, items in repeated.items():
        items.sort(key=lambda r: (r.status == OK, r.time or "", r.file))
        kept[node] = items[-1]
        notes.append(
            f"{node} is reported {len(items)} times ({', '.join(r.file for r in items)}): "
            f"{items[-1].file} is used"
        )
    return list(kept.values()), sorted(notes)


def _label(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters
