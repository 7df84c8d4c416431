"""Wiring for `lockguard clean-install`: scan, plan, then the transaction: move every stale and
outgoing file into the quarantine, keep a hard link of everything else, let pip install into a
prefix where nothing of the outgoing versions remains, verify by effect (RECORD files, import
smoke), and on any failure or interrupt undo all of it (exit 5)."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.check.snapshot import Snapshot
from lockguard.cli.env_check import host_conda_platform, lock_view, must_be_environment
from lockguard.cli.install_progress import Progress
from lockguard.errors import InputError, InstallFailed
from lockguard.install.inventory import LockView, take_inventory
from lockguard.install.plan import Plan, blocking, make_plan
from lockguard.install.verify import direct_names, smoke_modules
from lockguard.io.env.quarantine import Quarantine, QuarantineInfo, interrupted_quarantines
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.lock_paths import lock_file
from lockguard.model.prefix import PrefixSnapshot

FAULT_DURING_PIP = "LOCKGUARD_FAULT_DURING_PIP"  # tests: die once N packages are installed


def lock_must_be_current(snapshot: Snapshot, knowledge: Knowledge) -> None:
    from lockguard.check.rules_lock import lock_state

    for finding in lock_state(snapshot):
        raise InputError(f"{finding.file}: {finding.message}", file=finding.file,
                         hint="a clean-install applies only a current, untouched lock: " + (finding.hint or ""))


def target_prefix(prefix: Path | None, python: Path | None) -> Path:
    """The environment the user named, which must be one: a venv (pyvenv.cfg) or a conda prefix
    (conda-meta/). Never /, /usr or a base interpreter's installation."""
    from lockguard.io.env.prefix_scan import ask_interpreter, interpreter_of

    if python is not None:
        exe = interpreter_of(None, python)
        root = Path(ask_interpreter(exe)["prefix"])
        named = f"{python} (its sys.prefix is {root})"
    else:
        root = Path(os.path.abspath(prefix))
        named = str(prefix)
    return must_be_environment(root, named, hint="clean-install changes only virtual environments and conda "
                               "prefixes; create one (`python -m venv PATH`) and pass --prefix PATH")


def describe_interrupted(prefix: Path, infos: list[QuarantineInfo]) -> list[dict]:
    """What `restore` would do for each interrupted transaction (reads only)."""
    from lockguard.io.env.transaction import preview

    return [preview(Quarantine(prefix, info.id)) for info in infos]


def undo_interrupted(prefix: Path, progress: Progress) -> list[str]:
    """A run killed mid-way left its journal: undo it (pip's part included) before anything else."""
    from lockguard.io.env.transaction import undo

    undone = []
    for info in interrupted_quarantines(prefix):
        result = undo(Quarantine(prefix, info.id))
        progress.warn(f"clean-install {info.id} was interrupted; undone: removed {result.removed} files it had "
                      f"installed, put back {result.put_back} files")
        undone.append(info.id)
    return undone


@dataclass(frozen=True)
class LockSource:
    """What a clean-install applies: the lock as the inventory sees it, the entries pip installs
    (with hashes and index options) and where they come from."""

    view: LockView
    requirements: RequirementsLock
    label: str  # the file shown in the plan
    platform: str
    direct: list[str]  # names whose modules the import smoke imports
    snapshot: Snapshot | None = None  # the project (the conda side); None for a pylock.toml on its own
    links: tuple[str, ...] = ()  # file URLs pip may take (a pylock.toml names its files)


def project_source(snapshot: Snapshot, knowledge: Knowledge) -> LockSource:
    """The project's own lock: requirements.lock of the host's platform."""
    platform = host_conda_platform() if host_conda_platform() in snapshot.intent.platforms else snapshot.intent.platforms[0]
    label = snapshot.intent.source.root / lock_file(snapshot.intent, "requirements", platform)
    document = snapshot.of_kind("requirements", platform)
    requirements = document.requirements if document and document.requirements else RequirementsLock()
    return LockSource(lock_view(snapshot, knowledge), requirements, str(label), platform,
                      direct_names(snapshot.intent.pip), snapshot)


def pylock_source(path: Path, snapshot: Snapshot | None, knowledge: Knowledge) -> LockSource:
    """`--from pylock.toml`: its packages are what pip installs. With a project, it must pin
    exactly what the project's lock pins (two locks that disagree are refused, never merged);
    without one it is the whole lock (pip only)."""
    from dataclasses import replace

    from lockguard.install.pylock_source import disagreements, install_from_pylock
    from lockguard.io.project.project_files import parse_lock, read_lock_text

    text = read_lock_text(path)
    if text is None:
        raise InputError(f"{path} does not exist", file=str(path), hint="pass the pylock.toml to install from")
    pylock = parse_lock("pylock", text, str(path))
    found = install_from_pylock(pylock, str(path), os.path.dirname(os.path.abspath(path)))
    requirements, links = found.requirements, tuple(found.links)
    pins = {name: entry.version for name, entry in requirements.entries.items()}
    if snapshot is None:
        return LockSource(LockView(pip=pins), requirements, str(path), host_conda_platform(), sorted(pins),
                          links=links)
    source = project_source(snapshot, knowledge)
    differ = disagreements(pylock, source.view.pip)
    if differ:
        raise InputError(f"{path} pins other versions than the project's lock: {', '.join(differ[:5])}"
                         + (f" and {len(differ) - 5} more" if len(differ) > 5 else ""), file=str(path),
                         hint="run `lockguard resolve` (with `[outputs] pylock`) to write both from the intent, or "
                              "run clean-install outside the project to apply the pylock.toml on its own")
    return replace(source, requirements=requirements, label=str(path), links=links)


def build_plan(source: LockSource, prefix: Path | None, python: Path | None, *, verify_files: bool = False):
    from lockguard.io.env.prefix_scan import scan_prefix

    scan = scan_prefix(prefix, python)
    changed = None
    if verify_files:
        from lockguard.io.env.record_verify import verify_records

        changed = verify_records(scan, set(source.view.pip))
    inventory = take_inventory(scan, source.view, changed)
    return scan, make_plan(inventory, scan, requirements=source.label)


@dataclass
class Applied:
    quarantine: str
    installed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class Interrupted(KeyboardInterrupt):
    """SIGTERM during an apply: undo, then stop."""


@contextmanager
def _interrupts_as_exceptions():
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupted(_signum, _frame):
    raise Interrupted()


def _anchors(scan: PrefixSnapshot) -> set[str]:
    """Folders a move never removes: the site folders, the scheme's folders, and their parents."""
    out = set()
    for folder in [*scan.site_dirs, *scan.scheme.values()]:
        relative = os.path.relpath(folder, scan.prefix)
        while relative and relative != "." and not relative.startswith(".."):
            out.add(relative)
            relative = os.path.dirname(relative)
    return out


def apply_plan(plan: Plan, scan: PrefixSnapshot, source: LockSource, progress: Progress) -> Applied:
    """The transaction. On failure or interrupt everything is undone and the error re-raised
    (InstallFailed: exit 5, with what the rollback did)."""
    from lockguard.io.env.transaction import record_before, record_installed, undo

    q = Quarantine.create(Path(plan.prefix), plan.moves(), install=plan.install, anchors=_anchors(scan),
                          outgoing=[{"name": o.name, "version": o.version, "reason": o.reason} for o in plan.outgoing])
    applied = Applied(q.id, list(plan.install), [f"{o.name} {o.version}" for o in plan.outgoing])
    try:
        with _interrupts_as_exceptions():
            moved = q.move_all()
            if moved:
                progress.say(f"quarantined {moved} files in {q.root}")
            record_before(q)
            if plan.conda:
                _install_conda(plan, source, progress)
            if plan.install:
                _install(plan, scan, source, q, progress)
            installed = record_installed(q, plan.owners)
            if installed.replaced:
                progress.say(f"pip wrote over {len(installed.replaced)} files that staying packages share with the "
                             "new ones; their old copies are in the quarantine")
            if installed.modified:
                applied.warnings.append(f"pip changed {len(installed.modified)} files in place "
                                        f"({', '.join(installed.modified[:3])}); restore cannot give back their old bytes")
            applied.imported = _verify(plan, source, q, progress)
            q.log(event="verified")
    except BaseException as exc:  # anything, a bug of lockguard's included: the environment goes back first
        progress.close()
        rolled = _roll_back(q, undo)
        if isinstance(exc, InstallFailed):
            raise InstallFailed(exc.message + (f"\n{rolled}" if rolled else ""), hint=exc.hint) from None
        progress.say(("interrupted; " if isinstance(exc, KeyboardInterrupt) else "") + rolled)
        raise
    else:
        q.finish()
    finally:
        q.close()
    progress.close()
    return applied


def _roll_back(q: Quarantine, undo) -> str:
    if q.state() != "incomplete":  # the move step undid itself already (and said so)
        return ""
    result = undo(q)
    q.log(event="aborted")
    if not (result.removed or result.put_back):
        return "nothing in the environment was changed"
    line = (f"rolled back: removed {result.removed} files the run had installed, put back {result.put_back} "
            "quarantined files")
    if result.displaced:
        line += f"; {len(result.displaced)} files that changed meanwhile were kept in {q.root / 'displaced'}"
    return line


def _install(plan: Plan, scan: PrefixSnapshot, source: LockSource, q: Quarantine, progress: Progress) -> None:
    """pip installs exactly what the plan says, from the lock's entries (hashes and index options)."""
    from lockguard.install.pip_requirements import requirements_text
    from lockguard.io.env.bounded import kill_group
    from lockguard.io.env.pip_apply import install_lock
    from lockguard.model.names import canonical_name

    requirements = q.root / "install.txt"
    find_links = None
    if source.links:
        from lockguard.install.pylock_source import links_page

        find_links = q.root / "links.html"
        find_links.write_text(links_page(list(source.links)), encoding="utf-8")
    requirements.write_text(requirements_text(source.requirements, plan.install, find_links=find_links),
                            encoding="utf-8")
    wanted = {canonical_name(p.split("==", 1)[0]): p.split("==", 1)[1] for p in plan.install}
    total, fetched, done = len(wanted), [], []
    sites = [Path(s) for s in scan.site_dirs] or [Path(plan.prefix) / "lib"]
    fault = int(os.environ.get(FAULT_DURING_PIP, "0") or 0)

    def line(text: str) -> None:
        if text.startswith("Collecting "):
            fetched.append(text.split()[1])
            progress.step(f"downloading {fetched[-1]} ({len(fetched)}/{total})")
        elif text.startswith("Installing collected packages"):
            progress.step(f"installing {total} packages")

    def tick(process) -> None:
        for site in sites:
            try:
                infos = [n for n in os.listdir(site) if n.endswith(".dist-info")]
            except OSError:
                continue
            for info in infos:
                name, _, version = info[: -len(".dist-info")].partition("-")
                key = canonical_name(name)
                if key in wanted and key not in done and version == wanted[key] and (site / info / "RECORD").exists():
                    done.append(key)
                    progress.step(f"installed {key} {version} ({len(done)}/{total})")
        if fault and len(done) >= fault:
            kill_group(process)
            process.wait()
            os._exit(137)  # fault injection: killed during pip

    q.log(event="pip-start", packages=total)
    progress.step(f"downloading {total} packages")
    install_lock(plan.python, requirements, on_line=line, tick=tick)
    if fault:
        os._exit(137)  # pip was quicker than the polling: die before the run records what it added
    progress.say(f"installed {total} packages with pip")


def _install_conda(plan: Plan, source: LockSource, progress: Progress) -> None:
    from lockguard.io.index.cache import Cache
    from lockguard.io.index.conda import install_locked

    snapshot = source.snapshot
    conda_lock = snapshot.of_kind("conda-lock") if snapshot else None
    packages = (conda_lock.conda_lock or {}).get("package", []) if conda_lock else []
    if not any(p.get("manager") == "conda" for p in packages):
        raise InstallFailed("the lock has no solved conda records to install",
                            hint="resolve with reachable channels (not --conda-from-knowledge)")
    progress.step(f"installing conda records: {', '.join(plan.conda)}")
    install_locked(Path(plan.prefix), _full_conda_lock(snapshot), source.platform, Cache().root / "pkgs")
    progress.say(f"installed {len(plan.conda)} conda records")


def _full_conda_lock(snapshot: Snapshot) -> list[dict]:
    """conda-lock.yml with its dependencies and hashes (the check's fast reader keeps names only)."""
    from lockguard.lockfiles.conda_lock import read_document

    lock = snapshot.of_kind("conda-lock")
    return read_document(lock.text or "").get("package", []) if lock else []


def _verify(plan: Plan, source: LockSource, q: Quarantine, progress: Progress) -> list[str]:
    """By effect: a fresh scan must find every RECORD file of every locked distribution (and
    nothing else the plan fixes), and the target interpreter must import what the intent names."""
    from lockguard.io.env.import_smoke import run_smoke
    from lockguard.io.env.prefix_scan import scan_prefix

    progress.step("verifying the installed files against their RECORDs")
    scan = scan_prefix(Path(plan.prefix), Path(plan.python))
    remaining = blocking(take_inventory(scan, source.view).findings)
    if remaining:
        lines = "\n    ".join(f"{f.code} {f.message}" for f in remaining[:10])
        raise InstallFailed(f"the environment still differs from the lock after applying it:\n    {lines}",
                            hint="`lockguard check --env` shows the details")
    modules = smoke_modules(scan, source.view.pip, source.direct)
    if modules:
        progress.step(f"import smoke: {', '.join(modules)}")
    count = iter(range(1, len(modules) + 1))
    smoke = run_smoke(plan.python, modules, str(q.root),
                      lambda module: progress.step(f"imported {module} ({next(count)}/{len(modules)})"))
    if not smoke.ok:
        detail = "\n    ".join(smoke.detail.splitlines()[-15:])
        raise InstallFailed(f"the import smoke failed: `{smoke.command}` in {plan.prefix}:\n    {detail}",
                            hint="the lock does not work in this environment as installed; fix the cause "
                                 "(a missing system library? a wrong CUDA?) and run clean-install again")
    locked = sum(1 for d in scan.dists if d.in_prefix and d.name in source.view.pip)
    progress.say(f"verified: every RECORD file of the {locked} locked distributions is present"
                 + (f"; imported {', '.join(smoke.imported)}" if smoke.imported else ""))
    return smoke.imported
