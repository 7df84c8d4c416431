"""Wiring for `lockguard clean-install`: scan, plan (with a survey of what moves: sizes, and files
lockguard could not move), then the transaction: move every stale and outgoing file into the
quarantine, keep a hard link of everything else, let pip install into a prefix where nothing of
the outgoing versions remains, verify by effect (RECORD files, import smoke), and on any failure
undo all of it (exit 5, with the cause: "No space left on device", "Permission denied: PATH"); on
Ctrl-C or SIGTERM undo all of it too, and stop (exit 130). The steps inside the transaction (pip,
conda, verification) are in install_steps.py, what it applies in install_source.py."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lockguard import interrupts
from lockguard.app.env_check import must_be_environment
from lockguard.app.install_source import LockSource
from lockguard.app.install_steps import install_conda, install_packages, verify
from lockguard.app.reporting import InstallProgress
from lockguard.errors import InstallFailed, SourceUnreachable
from lockguard.install.inventory import take_inventory
from lockguard.install.plan import Plan, make_plan
from lockguard.io.deferred_signals import DeferredSignals
from lockguard.io.env.engines.registry import DEFAULT_INSTALLER, engine_named
from lockguard.io.env.engines.registry import INSTALLERS as INSTALLERS  # --installer's choices
from lockguard.io.env.interpreter import ask_interpreter, interpreter_of
from lockguard.io.env.prefix_lock import locked_prefix
from lockguard.io.env.prefix_scan import scan_prefix
from lockguard.io.env.preflight import survey_moves
from lockguard.io.env.quarantine import new_run_id, os_cause
from lockguard.io.env.quarantine_runs import QuarantineInfo, interrupted_quarantines
from lockguard.io.env.record_verify import verify_records
from lockguard.io.env.transaction import Transaction
from lockguard.model.finding import Finding
from lockguard.model.prefix import PrefixSnapshot
from lockguard.model.wording import counted, human_size


def target_prefix(prefix: Path | None, python: Path | None) -> Path:
    """The environment the user named, which must be one: a venv (pyvenv.cfg) or a conda prefix
    (conda-meta/). Never /, /usr or a base interpreter's installation."""
    if python is not None:
        exe = interpreter_of(None, python)
        root = Path(ask_interpreter(exe).prefix)
        named = f"{python} (its sys.prefix is {root})"
    elif prefix is not None:
        root = Path(os.path.abspath(prefix))
        named = str(prefix)
    else:  # the command takes exactly one of the two
        raise ValueError("the environment is named by a prefix or a python")
    return must_be_environment(
        root,
        named,
        hint="clean-install changes only virtual environments and conda "
        "prefixes; create one (`python -m venv PATH`) and pass --prefix PATH",
    )


@contextmanager
def held_environment(
    root: Path, *, exclusive: bool, wait: bool, on_wait, shown: str
) -> Iterator[str]:
    """The environment's lock for the block (shared for a dry run), naming the run it starts: its
    id, yielded. A second run waits for it, or with wait=False is refused (exit 2)."""
    run_id = new_run_id()
    with locked_prefix(
        root,
        "clean-install",
        exclusive=exclusive,
        run=run_id,
        wait=wait,
        on_wait=on_wait,
        shown=shown,
    ):
        yield run_id


def engine_can_start(installer: str) -> None:
    """InputError (exit 2, nothing changed) when the engine cannot run on this machine (no uv
    binary for the platform), naming the cause and the other engine."""
    engine_named(installer).ready()


def interrupted_runs(prefix: Path) -> list[QuarantineInfo]:
    """The runs (or restores) on this environment that were killed half-way."""
    return interrupted_quarantines(prefix)


def describe_interrupted(prefix: Path, infos: list[QuarantineInfo]) -> list[dict]:
    """What `restore` would do for each interrupted transaction (reads only)."""
    return [{**Transaction.of(prefix, info.id).preview(), "state": info.state} for info in infos]


def undo_interrupted(prefix: Path, progress: InstallProgress) -> list[str]:
    """A run killed mid-way left its journal: undo it (pip's part included) before anything else;
    a restore killed mid-way is finished the same way."""
    undone = []
    for info in reversed(interrupted_quarantines(prefix)):  # newest first, as restore goes
        interrupts.now(
            f"interrupted while undoing the earlier interrupted clean-install {info.id} in "
            f"{prefix}; `lockguard restore {info.id} --prefix {prefix}` finishes it"
        )
        result = Transaction.of(prefix, info.id).undo()
        what = (
            f"the restore of clean-install {info.id} was interrupted; finished it"
            if info.state == "restore-interrupted"
            else f"clean-install {info.id} was interrupted; undone"
        )
        progress.warn(
            f"{what}: removed {counted(result.removed, 'file')} it had installed, put back "
            f"{counted(result.put_back, 'file')}"
        )
        undone.append(info.id)
        interrupts.now(
            f"interrupted after clean-install {', '.join(undone)} (interrupted earlier) was "
            f"undone; nothing else changed in {prefix}"
        )
    return undone


def build_plan(
    source: LockSource,
    prefix: Path | None,
    python: Path | None,
    *,
    verify_files: bool = False,
    installer: str = DEFAULT_INSTALLER,
):
    """The scan and the plan, with the survey of what moves: each file's size, and the files
    lockguard could not move (unreadable, immutable, in a folder it cannot write)."""
    scan = scan_prefix(prefix, python)
    changed = None
    if verify_files:
        changed = verify_records(scan, set(source.view.pip))
    inventory = take_inventory(scan, source.view, changed)
    plan = make_plan(inventory, scan, requirements=source.label)
    plan.installer = installer
    survey = survey_moves(plan.prefix, [item.path for item in plan.moves()])
    plan.sizes = dict(survey.sizes)
    plan.blocked = [(item.path, item.why) for item in survey.blocked]
    return scan, plan


@dataclass
class Applied:
    quarantine: str
    root: str = ""  # where its quarantine lives
    installed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    quarantined: int = 0  # files moved into the quarantine
    quarantined_bytes: int = 0


def _anchors(scan: PrefixSnapshot) -> set[str]:
    """Folders a move never removes: the site folders, the scheme's folders, and their parents."""
    out = set()
    for folder in [*scan.site_dirs, *scan.scheme.values()]:
        relative = os.path.relpath(folder, scan.prefix)
        while relative and relative != "." and not relative.startswith(".."):
            out.add(relative)
            relative = os.path.dirname(relative)
    return out


def apply_plan(
    plan: Plan, scan: PrefixSnapshot, source: LockSource, progress: InstallProgress, run_id: str
) -> Applied:
    # the engine the plan names; the command checked it can start before the plan was applied
    """The transaction. On failure or interrupt everything is undone and the error re-raised
    (InstallFailed: exit 5, with its cause and what the rollback did; an interrupt: exit 130)."""
    if plan.blocked:
        shown = "\n    ".join(f"{path}: {why}" for path, why in plan.blocked[:10])
        more = f"\n    ... and {len(plan.blocked) - 10} more" if len(plan.blocked) > 10 else ""
        raise InstallFailed(
            f"cannot move {counted(len(plan.blocked), 'file')} into the quarantine; nothing was "
            f"changed:\n    {shown}{more}",
            hint=_blocked_hint(plan.blocked),
        )
    moves = plan.moves()
    applied = Applied(run_id)
    applied.removed = [f"{o.name} {o.version}" for o in plan.outgoing]
    t = None
    # SIGTERM and SIGHUP raise as Ctrl-C does (lockguard/interrupts.py): each rolls back
    try:
        if moves:
            progress.say(
                f"hashing {counted(len(moves), 'file')} "
                f"({human_size(plan.size_of(m.path for m in moves))}) "
                "for the quarantine manifest"
            )
        t = Transaction.begin(
            Path(plan.prefix),
            moves,
            install=plan.install,
            anchors=_anchors(scan),
            qid=run_id,
            outgoing=[
                {"name": o.name, "version": o.version, "reason": o.reason} for o in plan.outgoing
            ],
            on_hashed=_hashing(progress, len(moves)),
        )
        q = t.quarantine
        applied.root = str(q.root)
        moved = t.move_out()
        applied.quarantined = moved
        applied.quarantined_bytes = sum(e.get("size") or 0 for e in q.manifest()["entries"])
        if moved:
            progress.say(
                f"quarantined {counted(moved, 'file')} "
                f"({human_size(applied.quarantined_bytes)}) in {q.root}"
            )
        t.record_before()
        if plan.conda:
            install_conda(plan, source, progress)
        if plan.install:
            engine = engine_named(plan.installer)
            applied.installed = install_packages(plan, scan, source, q, progress, engine)
        installed = t.record_installed(plan.owners)
        if installed.replaced:
            progress.say(
                f"{plan.installer} wrote over {counted(len(installed.replaced), 'file')} that "
                "staying packages share with the new ones; their old copies are in the quarantine"
            )
        if installed.modified:
            applied.warnings.append(
                f"{plan.installer} changed {counted(len(installed.modified), 'file')} in place "
                f"({', '.join(installed.modified[:3])}); restore cannot give back their old "
                "bytes"
            )
        applied.imported = verify(plan, source, q, progress)
        q.log(event="verified")
    # anything, a bug of lockguard's included: the environment goes back first
    except BaseException as exc:
        progress.close()
        # a second Ctrl-C waits for the rollback it asked for, then reports what it did
        with DeferredSignals():
            rolled = _roll_back(t) if t is not None else "nothing in the environment was changed"
            interrupts.now(
                f"interrupted; {rolled or 'the run had undone itself already'} ({plan.prefix})"
            )
        if isinstance(exc, InstallFailed):
            raise InstallFailed(
                exc.message + (f"\n{rolled}" if rolled else ""), hint=exc.hint
            ) from None
        if isinstance(exc, SourceUnreachable):  # a download that stalled: exit 4, rolled back
            raise SourceUnreachable(
                exc.message + (f"\n{rolled}" if rolled else ""), url=exc.url, hint=exc.hint
            ) from None
        # a full disk, a permission: the cause, and that it was undone
        if isinstance(exc, OSError):
            raise InstallFailed(
                f"clean-install failed: {os_cause(exc)}" + (f"\n{rolled}" if rolled else ""),
                hint=_SPACE_HINT
                if exc.errno == 28
                else ACROSS_HINT
                if exc.errno == errno.EXDEV
                else "run as a user that owns the environment",
            ) from None
        raise
    else:
        with DeferredSignals():  # the run's end, and what an interrupt then says, as one
            t.quarantine.finish()
            interrupts.now(
                f"interrupted after clean-install {run_id} finished: {plan.prefix} matches "
                f"the lock; `lockguard restore {run_id} --prefix {plan.prefix}` undoes it"
            )
    finally:
        if t is not None:
            t.quarantine.close()
    progress.close()
    return applied


_SPACE_HINT = "free some space on the environment's file system and run again"
ACROSS_HINT = (
    "the quarantine is a rename on the same file system: give the environment's site-packages "
    "and its .lockguard folder one file system (a volume or bind mount over the whole prefix, "
    "not over site-packages alone)"
)


def _blocked_hint(blocked: list[tuple[str, str]]) -> str:
    if any("on another file system" in why for _path, why in blocked):
        return ACROSS_HINT + " (`--dry-run` lists every file)"
    return (
        "run as a user that owns the environment and can read every file in it; "
        "`chattr -i` an immutable file first (`--dry-run` lists them all)"
    )


def _hashing(progress: InstallProgress, total: int):
    """Progress of the manifest's hashing (10-40 s for a CUDA upgrade's 5 GB): live on a terminal,
    a line every few seconds in a log."""
    last = [0.0]

    def on_hashed(files: int, size: int) -> None:
        now = time.monotonic()
        if files == total or now - last[0] >= (0.1 if progress.live else 5.0):
            last[0] = now
            progress.step(
                f"hashing for the manifest: {files:,}/{total:,} files, {human_size(size)}"
            )

    return on_hashed


def _roll_back(t: Transaction) -> str:
    """Undo the run; what it did, in words. An undo that stops (its own cause) says so: the
    quarantine keeps what is not back yet, and restore finishes it."""
    q = t.quarantine
    if q.state() != "incomplete":  # the move step undid itself already (and said so)
        return ""
    try:
        result = t.undo()
    except InstallFailed as exc:
        return f"rolling back stopped: {exc.message} ({exc.hint})"
    marked = q.mark("aborted")  # always: the run's end is recorded even when its journal lagged
    journal_error = result.journal_error or marked
    if not (result.removed or result.put_back):
        line = "nothing in the environment was changed"
    else:
        line = (
            f"rolled back: removed {counted(result.removed, 'file')} the run had installed, "
            f"put back {counted(result.put_back, 'quarantined file')}"
        )
    if result.displaced:
        line += (
            f"; {counted(len(result.displaced), 'file')} that changed meanwhile were kept in "
            f"{q.root / 'displaced'}"
        )
    if journal_error:
        line += f" (its journal could not record every step: {journal_error})"
    return line


@dataclass(frozen=True, slots=True)
class InstallOutcome:
    """What a clean-install did: the plan (None when a dry run found an interrupted run, whose
    undo it describes in `previews`), what was applied (None for a dry run or a plan that changes
    nothing), the reported errors outside what it changes, and the exit code."""

    prefix: Path
    failing: int
    plan: Plan | None = None
    applied: Applied | None = None
    previews: tuple[dict, ...] = ()  # JSON records, one per interrupted run
    errors: tuple[Finding, ...] = ()


def clean_install(
    *,
    intent_path: Path | None,
    prefix: Path | None,
    python_exe: Path | None,
    from_file: Path | None,
    dry_run: bool,
    yes: bool,
    installer: str,
    strict: bool,
    verify_files: bool,
    wait: bool,
    progress: InstallProgress,
    show_plan: Callable[[Plan], None],
    confirm: Callable[[], None],
    warn: Callable[[str], None],
    profile: str | None = None,
) -> InstallOutcome:
    """The whole of `lockguard clean-install`: the lock and the environment, the environment's
    lock, an interrupted earlier run finished first (a dry run only describes it), the plan, then
    (unless a dry run, or nothing to change) `show_plan`, `confirm` (it raises to stop) and the
    transaction. Reported findings are judged as `check --env` judges them: an error fails the
    run, a warning only with `strict`."""
    from lockguard.app.install_source import lock_source
    from lockguard.errors import InputError
    from lockguard.model.finding import ERROR

    if (prefix is None) == (python_exe is None):
        raise InputError(
            "clean-install needs exactly one of --prefix PREFIX or --python EXE",
            hint="e.g. lockguard clean-install --prefix .venv --dry-run",
        )
    source = lock_source(intent_path, from_file, warn=warn, profile=profile)
    root = target_prefix(prefix, python_exe)
    interrupts.now(f"interrupted before anything changed in {root}")
    with held_environment(
        root,
        exclusive=not dry_run,
        wait=wait,
        on_wait=progress.say,
        shown=str(prefix or root),
    ) as run_id:
        stuck = interrupted_runs(root)
        if stuck and dry_run:
            return InstallOutcome(root, 1, previews=tuple(describe_interrupted(root, stuck)))
        if stuck:
            undo_interrupted(root, progress)
        scan, plan = build_plan(
            source, prefix, python_exe, verify_files=verify_files, installer=installer
        )
        errors = [f for f in plan.reported if f.severity == ERROR]
        failing = 1 if errors or (strict and plan.reported) else 0
        if dry_run or plan.changes_nothing:
            failing = 1 if plan.blocked and dry_run else failing
            return InstallOutcome(root, failing, plan=plan, errors=tuple(errors))
        show_plan(plan)
        if not yes and not plan.blocked:
            confirm()
        if plan.install:  # an engine that cannot start: exit 2 before anything changes
            engine_can_start(installer)
        applied = apply_plan(plan, scan, source, progress, run_id)
    return InstallOutcome(
        Path(scan.prefix), failing, plan=plan, applied=applied, errors=tuple(errors)
    )
