"""The rules of a project with `[profiles]` (issue 33): each profile's lock files checked as a
project's are (its findings named after it), the repository files against the profiles together
(a Dockerfile that fits one profile is not wrong for the others), and LG113: a package that two
profiles or more lock at different versions, with no reason recorded by resolve. Pure."""

from __future__ import annotations

from dataclasses import replace

from lockguard.check.lock_facts import lock_facts
from lockguard.check.rules_cuda import cuda_coherence
from lockguard.check.rules_lock import contents_match_intent, lock_state, strict, views_agree
from lockguard.check.rules_repo import repo_files
from lockguard.check.snapshot import Snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.headers import values_of
from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.shared_pins import HELD_BACK_KEY, held_back_names, public_version


def profile_findings(
    snapshots: list[Snapshot], knowledge: Knowledge, *, strict_mode: bool = False
) -> list[Finding]:
    """Every profile's findings (its name first in each message), the repository's findings
    that hold against every profile, and LG113."""
    findings: list[Finding] = []
    repo: list[set[Finding]] = []
    for snapshot in snapshots:
        own = lock_state(snapshot) + views_agree(snapshot) + contents_match_intent(snapshot)
        for platform in snapshot.intent.platforms:
            facts = lock_facts(snapshot, knowledge, platform)
            own += cuda_coherence(snapshot.intent, facts, knowledge)
            if platform == snapshot.intent.platforms[0]:
                repo.append(set(repo_files(snapshot.repo_files, facts)))
        if strict_mode:
            own += strict(snapshot)
        name = snapshot.intent.profile
        findings += [replace(f, message=f"profile {name}: {f.message}") for f in own]
    if repo:
        findings += set.intersection(*repo)
    findings += shared_versions(snapshots)
    unique = list(dict.fromkeys(findings))
    return sorted(unique, key=lambda f: f.sort_key)


def shared_versions(snapshots: list[Snapshot]) -> list[Finding]:
    """LG113: one package, several versions across the profiles, and no profile's requirements
    lock says why (its `lockguard-held-back` lines, written by resolve's shared rule)."""
    versions: dict[str, dict[str, list[tuple[str, str]]]] = {}  # name -> version -> (profile, file)
    explained: set[str] = set()
    for snapshot in snapshots:
        for file in snapshot.files:
            parsed = file.requirements
            if parsed is None or file.text is None:
                continue
            explained |= held_back_names(values_of(file.text, HELD_BACK_KEY))
            for name, entry in parsed.entries.items():
                held = versions.setdefault(name, {}).setdefault(public_version(entry.version), [])
                held.append((str(snapshot.intent.profile), file.path))
    out = []
    for name, by_version in sorted(versions.items()):
        if len(by_version) < 2 or name in explained:
            continue
        common = max(by_version, key=lambda v: len(by_version[v]))
        said = "; ".join(
            f"{version} in {', '.join(sorted({p for p, _f in held}))}"
            for version, held in sorted(by_version.items())
        )
        odd = next(f for v, held in sorted(by_version.items()) if v != common for _p, f in held)
        out.append(
            codes.SHARED_VERSION_DIFFERS.finding(
                f"{name} differs between the profiles ({said}) and no lock file records why",
                hint="run `lockguard resolve`: it gives a package the profiles share one version "
                "in every profile, or records why a profile cannot have it",
                file=odd,
            )
        )
    return out
