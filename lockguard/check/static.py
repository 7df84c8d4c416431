"""`lockguard check` without --env: every static rule over one snapshot. Pure."""

from __future__ import annotations

from lockguard.check.lock_facts import lock_facts
from lockguard.check.rules_cuda import cuda_coherence
from lockguard.check.rules_lock import contents_match_intent, lock_state, strict, views_agree
from lockguard.check.rules_repo import repo_files
from lockguard.check.snapshot import Snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.model.finding import Finding


def static_findings(
    snapshot: Snapshot, knowledge: Knowledge, *, strict_mode: bool = False
) -> list[Finding]:
    findings = lock_state(snapshot)
    findings += views_agree(snapshot)
    findings += contents_match_intent(snapshot)
    for platform in snapshot.intent.platforms:
        facts = lock_facts(snapshot, knowledge, platform)
        findings += cuda_coherence(snapshot.intent, facts, knowledge)
        if platform == snapshot.intent.platforms[0]:
            findings += repo_files(snapshot.repo_files, facts)
    if strict_mode:
        findings += strict(snapshot)
    unique = list(dict.fromkeys(findings))
    return sorted(unique, key=lambda f: f.sort_key)
