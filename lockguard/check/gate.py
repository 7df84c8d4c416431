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
from lockguard.model.finding import ERROR
from lockguard.model.intent import Intent


def refuse_what_check_rejects(
    intent: Intent,
    knowledge: Knowledge,
    files: list[tuple[str, str, str | None, str]],
    platforms: tuple[str, ...],
) -> None:
    """`files`: (relative path, kind, platform, text) of every file resolve would write."""
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
    errors = []
    for platform in platforms:
        facts = lock_facts(snapshot, knowledge, platform)
        errors += [f for f in cuda_coherence(intent, facts, knowledge) if f.severity == ERROR]
    if not errors:
        return
    errors = list(dict.fromkeys(errors))
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
