"""resolve never writes a lock that check rejects: the CUDA coherence rules of `lockguard check`
(LG120-LG129) run over the files resolve is about to write, and any error is a refusal (exit 3)
that names the rule and the knowledge row it rests on. The resolver already steers clear of most
of them (knowledge constraints); this gate is the guarantee."""

from __future__ import annotations

from lockguard.check.lock_facts import lock_facts
from lockguard.check.rules_cuda import cuda_coherence
from lockguard.check.snapshot import LockFile, Snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.formats import format_of
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.finding import ERROR, Finding
from lockguard.model.intent import Intent


def check_findings(
    intent: Intent,
    knowledge: Knowledge,
    files: list[tuple[str, str, str | None, str]],
    platforms: tuple[str, ...],
) -> list[Finding]:
    """What the CUDA coherence rules of `lockguard check` find in the files resolve would write
    (`files`: relative path, kind, platform, text), every severity. The other rules of check
    find nothing in a set resolve wrote for this intent (its views agree and say what the intent
    does); none of these findings is what lets the set certify itself (lockfiles/headers.py)."""
    views = []
    for path, kind, platform, text in files:
        found = format_of(kind)
        if not found.cuda_rules:
            continue  # other views (pylock.toml) hold the same pins; the rules read the others
        views.append(LockFile(path, text, kind, platform, parsed=found.parse(text)))
    snapshot = Snapshot(
        intent=intent,
        intent_file=intent.source.path.name if intent.source else "lockguard.toml",
        files=tuple(views),
    )
    findings: list[Finding] = []
    for platform in platforms:
        facts = lock_facts(snapshot, knowledge, platform)
        findings += cuda_coherence(intent, facts, knowledge)
    return list(dict.fromkeys(findings))


def refuse_what_check_rejects(findings: list[Finding]) -> None:
    """`findings`: check_findings' for the files resolve would write; any error is a refusal."""
    errors = [f for f in findings if f.severity == ERROR]
    if not errors:
        return
    first = errors[0]
    raise Unsatisfiable(
        f"the resolution breaks a rule `lockguard check` enforces, so no lock was written: "
        f"{first.code} {first.message}"
        + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
        conflicts=[
            Conflict(f"{f.code} {f.message}", f"{f.file}:{f.line}" if f.line else f.file)
            for f in errors
        ],
        hint=first.hint or "change the intent so that the rule holds",
    )
