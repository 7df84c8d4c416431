"""`lockguard check`'s session: the project's lock set held shared (a resolve writing it is waited
for, or with wait=False refused: exit 2), the static rules over the intent, the lock files and the
repository, and with an environment the installed prefix against the lock. It runs on every commit:
the plain check parses the intent without the costly checks and validates it fully only when the
lock does not match it (an invalid intent is then the real problem)."""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from lockguard.app.reporting import Messages
    from lockguard.model.finding import Finding
    from lockguard.model.intent import Intent


def lock_folder(intent_path) -> str:
    """The folder whose lock set a check of this intent reads: the folder the intent file is in,
    as resolve locks it (Intent.source.root; a symlinked intent's own folder)."""
    from lockguard.io.project.project_paths import project_folder

    if intent_path is None:
        from lockguard.errors import InputError
        from lockguard.io.project.intent_file import find_intent

        try:  # the project the working folder lies in (an intent above it: io/project/intent_file)
            intent_path = find_intent(pathlib.Path.cwd())
        except InputError:  # none: the check itself says so
            intent_path = "lockguard.toml"
    return project_folder(intent_path)


def project_lock(intent_path, *, wait: bool, on_wait, warn):
    """The project's lock set, shared, for a `with`: never half of a resolve's commit."""
    from lockguard.io.project.lock_set import LockSet

    return LockSet(
        lock_folder(intent_path),
        exclusive=False,
        command="check",
        wait=wait,
        on_wait=on_wait,
        warn=warn,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    """What a check found: the findings (files named from the working folder), the intent as the
    user would type it from here, the exit code, and what the check read (for its result memo)."""

    findings: tuple[Finding, ...]
    shown: str
    code: int | None  # None: 1 when a finding fails the check, else 0
    intent: Intent
    lock_files: tuple[str, ...]


def static_check(intent_path, *, strict: bool, warn, profile: str | None = None) -> Checked:
    """The intent against its lock files and the repository; no network, no solve. Two tiers
    (issue 34 §3): a lock set whose files prove themselves (check/proof.py) with no repository
    file the rules read and no --strict has the findings the rules found when resolve wrote it,
    none; anything else runs the full rules."""
    from lockguard.io.project.intent_file import load_project, source_of
    from lockguard.model.lock_paths import project_lock_files

    intent = load_project(
        intent_path, validate=False, validate_matchspec=_matchspec_problem, warn=warn
    )
    if profile is not None:  # that profile's files alone, as a project without profiles
        from lockguard.model.profiles import one_profile

        intent = one_profile(intent, profile)
    if not strict and not intent.profiles and _proven(intent):
        findings = []
    else:
        findings = _full_rules(intent, strict=strict)
    findings = from_here(findings, os.path.dirname(source_of(intent).location))
    if findings and _lock_does_not_match(findings):
        # the lock does not match the intent: an intent that is itself invalid (an unparsable
        # requirement) is the real problem, reported as bad input rather than as "lock missing"
        load_project(intent_path, validate=True)
    return Checked(
        findings=tuple(findings),
        shown=shown_path(source_of(intent).location),
        code=None,
        intent=intent,
        lock_files=tuple(project_lock_files(intent)),
    )


def proof_check(intent_path, *, warn) -> Checked | None:
    """The first tier alone, for cli/boundary.py before click is imported: the check of a lock
    set that proves itself (no findings), or None when the full check must run (the proof fails,
    a repository file or [profiles] asks for the rules, or the intent is not readable: the full
    check reports it). `warn` gets the intent's warnings only when the answer is given."""
    from lockguard.errors import LockguardError
    from lockguard.io.project.intent_file import load_project, source_of
    from lockguard.model.lock_paths import lock_paths

    said: list[str] = []
    intent_path = "." if intent_path == "" else intent_path  # what an empty path names
    try:
        intent = load_project(
            intent_path,
            validate=False,
            validate_matchspec=_matchspec_problem,
            warn=said.append,
        )
        if intent.profiles or not _proven(intent):
            return None
    except (LockguardError, OSError):
        return None
    for message in said:
        warn(message)
    return Checked(
        findings=(),
        shown=shown_path(source_of(intent).location),
        code=None,
        intent=intent,
        lock_files=tuple(p for p, _kind, _platform in lock_paths(intent)),
    )


def _lock_does_not_match(findings: list) -> bool:
    from lockguard.model import codes  # the registry: only once there are findings to read

    mismatch = (codes.LOCK_MISSING.code, codes.INTENT_CHANGED.code, codes.LOCK_NOT_LOCKGUARDS.code)
    return any(f.code in mismatch for f in findings)


def _proven(intent: Intent) -> bool:
    """Whether the intent's lock files prove themselves and no repository file the rules read
    (requirements*.txt, Dockerfiles, pyproject.toml, setup.cfg) is there to contradict them."""
    from lockguard import __version__
    from lockguard.check.proof import proven
    from lockguard.io.knowledge.fingerprint import knowledge_fingerprint
    from lockguard.io.project.intent_file import source_of
    from lockguard.io.project.project_paths import read_project_lock
    from lockguard.io.project.repo_scan import repository_paths
    from lockguard.model.lock_paths import lock_paths

    root = source_of(intent).folder
    locks = [relative for relative, _kind, _platform in lock_paths(intent)]
    if set(repository_paths(root)) - set(locks):
        return False
    files = {relative: read_project_lock(root, relative) for relative in locks}
    return proven(
        files, intent_hash=intent.hash, knowledge=knowledge_fingerprint(), version=__version__
    )


def _full_rules(intent: Intent, *, strict: bool) -> list:
    """Every static rule over the intent's snapshot (each profile's, and what they share)."""
    from lockguard.check.static import static_findings
    from lockguard.io.knowledge.files import load_knowledge
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.model.lock_paths import project_lock_files

    if intent.profiles:  # each profile's lock set, and what the profiles share (issue 33)
        from lockguard.check.rules_profiles import profile_findings

        every = set(project_lock_files(intent))
        snapshots = [read_snapshot(one, exclude=every) for one in intent.profiles]
        return profile_findings(snapshots, load_knowledge(validate=False), strict_mode=strict)
    snapshot = read_snapshot(intent)
    return static_findings(snapshot, load_knowledge(validate=False), strict_mode=strict)


def environment_check(
    intent_path,
    *,
    prefix,
    python,
    strict: bool,
    verify_files: bool,
    wait: bool,
    on_wait,
    warn,
    profile: str | None = None,
) -> Checked:
    """The static check and the installed environment (`--env PREFIX` or `--python EXE`) against
    the lock, read under the prefix's shared lock; an interrupted clean-install first."""
    from lockguard.app.env_check import environment_exit_code, environment_findings
    from lockguard.app.profile_pick import profile_for
    from lockguard.app.project import load_project_intent
    from lockguard.check.static import static_findings
    from lockguard.io.knowledge.files import load_knowledge
    from lockguard.io.project.intent_file import source_of
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.model import codes

    intent = profile_for(
        load_project_intent(intent_path, warn=warn), profile, command="check --env"
    )
    snapshot = read_snapshot(intent)
    findings = static_findings(snapshot, load_knowledge(), strict_mode=strict)
    checked = shown_path(source_of(intent).path)
    if intent.profile:
        checked += f" (profile {intent.profile})"
    environment = environment_findings(
        snapshot,
        load_knowledge(),
        prefix=prefix,
        python=python,
        verify_files=verify_files,
        wait=wait,
        on_wait=on_wait,
    )
    checked += f" and {prefix or python}"
    code = environment_exit_code(findings, environment, strict=strict)
    interrupted = [
        f for f in environment if f.code == codes.INTERRUPTED_RUN.code
    ]  # first, with its fix: the rest may be its doing
    rest = [f for f in environment if f.code != codes.INTERRUPTED_RUN.code]
    return Checked(
        findings=tuple(from_here(interrupted + findings + rest, source_of(intent).root)),
        shown=checked,
        code=code,
        intent=intent,
        lock_files=(),
    )


def remember(
    command_line, checked: Checked, intent_path, *, wait: bool, json: bool, output: str, code: int
) -> None:
    """Keep the output of a plain check for the same command line (cli/boundary.py answers it
    before click is imported, while the files it read keep their bytes). A check whose intent the
    full check must find each time (none, or two) is not kept."""
    from lockguard.io.project.check_cache import CheckResults, find_intent_path
    from lockguard.io.project.intent_file import source_of

    found = find_intent_path(intent_path)
    if found is None:
        return
    CheckResults(command_line).store(
        intent=found,
        default_intent=intent_path is None,
        root=os.path.dirname(source_of(checked.intent).location),
        lock_files=checked.lock_files,
        lock_folder=lock_folder(intent_path),
        wait=wait,
        json=json,
        output=output,
        code=code,
    )


def check(
    ui: Messages,
    *,
    intent_path: str | None,
    env_prefix: str | None = None,
    python_exe: str | None = None,
    intent_file: Callable[[], object] = lambda: None,
    strict: bool = False,
    verify_files: bool = False,
    wait: bool = True,
    show: Callable[[Checked], tuple[str, int]],
    remember_as: tuple[str, ...] | None = None,
    json: bool = False,
    profile: str | None = None,
) -> int:
    """`lockguard check`'s sequence, under the project's lock set held shared to the end (never
    half of a resolve's commit; `wait=False`: exit 2 while a resolve writes it): the static check,
    or with `env_prefix` or `python_exe` the environment check (its intent as `intent_file()`
    gives it); `show` renders and prints the result and gives back (output, exit code); a plain
    check's output is then kept under the command line `remember_as` (None: not kept) for the
    replay before click (cli/boundary.py). The exit code."""
    with project_lock(intent_path, wait=wait, on_wait=ui.info, warn=ui.warn):
        if env_prefix is not None or python_exe is not None:
            checked = environment_check(
                intent_file(),
                prefix=pathlib.Path(env_prefix) if env_prefix is not None else None,
                python=pathlib.Path(python_exe) if python_exe is not None else None,
                strict=strict,
                verify_files=verify_files,
                wait=wait,
                on_wait=ui.info,
                warn=ui.warn,
                profile=profile,
            )
            remember_as = None  # the environment is not among the files a replay compares
        else:
            # what an empty path names (pathlib's reading)
            intent_path = "." if intent_path == "" else intent_path
            checked = static_check(intent_path, strict=strict, warn=ui.warn, profile=profile)
        output, code = show(checked)
        if remember_as is not None:
            remember(
                remember_as, checked, intent_path, wait=wait, json=json, output=output, code=code
            )
        return code


def _matchspec_problem(spec: str) -> str | None:
    """The MatchSpec check resolve makes (rattler, imported only for an intent with conda specs)."""
    from lockguard.io.index.conda import matchspec_problem

    return matchspec_problem(spec)


def _below_here(root) -> str | None:
    """The project folder relative to the current one when it lies below it ("sub") or above it
    ("../..": a check from a subfolder finds the intent above), else None."""
    relative = os.path.relpath(os.path.realpath(os.fspath(root)), os.path.realpath(os.getcwd()))
    above = all(part == ".." for part in relative.split(os.sep))
    return None if relative == "." or (relative.startswith("..") and not above) else relative


def shown_path(path) -> str:
    """The intent as the user would type it from here (sub/lockguard.toml from a monorepo's
    root)."""
    folder = _below_here(os.path.dirname(os.fspath(path)))
    name = os.path.basename(os.fspath(path))
    return os.path.join(folder, name) if folder else name


def from_here(findings: list, root) -> list:
    """Findings name files relative to the project; run from a folder above the project (a
    monorepo's root, where CI runs) they are named from there, so `--intent sub/lockguard.toml
    --format github` annotates sub/Dockerfile, a file that exists in the repository."""
    folder = _below_here(root)
    if folder is None:
        return findings
    from lockguard.model.finding import Finding

    out = []
    for f in findings:
        if f.file and not os.path.isabs(f.file):
            f = Finding(f.code, f.severity, f.message, f.hint, os.path.join(folder, f.file), f.line)
        out.append(f)
    return out


def annotation_folders() -> tuple[str, str]:
    """(the working folder, the folder GitHub resolves an annotation's `file=` against)."""
    from lockguard.io.project.git_files import annotation_root

    cwd = os.getcwd()
    return cwd, str(annotation_root(pathlib.Path(cwd)))
