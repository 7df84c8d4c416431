"""`lockguard check --env PREFIX | --python EXE`: the installed environment against the lock."""

from __future__ import annotations

import contextlib
import os
import platform as host_platform
import sys
from pathlib import Path

from lockguard.check.lock_facts import lock_facts
from lockguard.check.snapshot import Snapshot
from lockguard.errors import InputError
from lockguard.install.inventory import take_inventory
from lockguard.install.lock_diff import LockView
from lockguard.io.env.prefix_lock import locked_prefix
from lockguard.io.env.prefix_scan import scan_prefix
from lockguard.io.env.quarantine_runs import interrupted_quarantines
from lockguard.io.env.record_verify import verify_records
from lockguard.knowledge.tables import Knowledge
from lockguard.model import codes
from lockguard.model.finding import ERROR, WARNING, Finding, failing


def host_conda_platform() -> str:
    machine = host_platform.machine().lower()
    if sys.platform == "darwin":
        return "osx-arm64" if machine == "arm64" else "osx-64"
    return {
        "x86_64": "linux-64",
        "amd64": "linux-64",
        "aarch64": "linux-aarch64",
        "arm64": "linux-aarch64",
        "ppc64le": "linux-ppc64le",
    }.get(machine, "linux-64")


def lock_view(snapshot: Snapshot, knowledge: Knowledge) -> LockView:
    platform = host_conda_platform()
    if platform not in snapshot.intent.platforms:
        platform = snapshot.intent.platforms[0]
    facts = lock_facts(snapshot, knowledge, platform)
    environment = snapshot.of_kind("environment", platform)
    conda = {}
    solved = bool(environment and environment.header and environment.header.conda_solved)
    if environment and environment.environment:
        conda = {n: (v, b) for n, (v, b, _l) in environment.environment.conda.items()}
    cuda = facts.torch_cuda or facts.conda_cuda()
    nccl = next((v for n, v in facts.pip.items() if n.startswith("nvidia-nccl-")), None)
    cudnn = next((v for n, v in facts.pip.items() if n.startswith("nvidia-cudnn-")), None)
    return LockView(
        pip=dict(facts.pip),
        conda=conda,
        conda_solved=solved,
        cuda=str(cuda.major_minor) if cuda else None,
        nccl=nccl,
        cudnn=cudnn,
    )


def must_be_environment(root: Path, named: str | None = None, *, hint: str) -> Path:
    """The real path of `root`, which must be an environment: a venv (pyvenv.cfg) or a conda prefix
    (conda-meta/). Never /, /usr, a file or a FIFO: InputError naming it."""
    real = Path(os.path.realpath(root))
    try:
        shaped = (real / "pyvenv.cfg").is_file() or (real / "conda-meta").is_dir()
    except OSError as exc:  # a folder this user cannot enter
        raise InputError(
            f"cannot look into {named or root}: {exc.strerror or exc}",
            file=str(root),
            hint="run as a user that can read the environment",
        ) from None
    if str(real) == "/" or not shaped:
        raise InputError(
            f"{named or root} is not an environment: it has neither a pyvenv.cfg (a venv) nor a "
            "conda-meta/ folder (a conda prefix)",
            file=str(root),
            hint=hint,
        )
    return real


def environment_findings(
    snapshot: Snapshot,
    knowledge: Knowledge,
    *,
    prefix: Path | None,
    python: Path | None,
    verify_files: bool = False,
    wait: bool = True,
    on_wait=None,
) -> list[Finding]:
    """The installed environment against the lock, read under the prefix's shared lock (a running
    clean-install or restore is waited for, or with wait=False is exit 2)."""
    root: Path | None
    # --env names an environment; --python may be any interpreter, a base one too
    if prefix is not None:
        root = must_be_environment(
            prefix,
            hint="--env takes a venv or a conda prefix; for another installation pass "
            "its interpreter with --python EXE",
        )
    # the environment a --python lives in, if it is one (a base interpreter's folder is never
    # locked)
    elif python is not None:
        guess = Path(os.path.realpath(Path(os.path.abspath(python)).parent.parent))
        try:
            root = (
                guess
                if (guess / "pyvenv.cfg").is_file() or (guess / "conda-meta").is_dir()
                else None
            )
        except OSError:  # not this user's to look into: the scan says so, naming the interpreter
            root = None
    else:
        raise ValueError("an environment to check takes a prefix or a python")
    lock = (
        locked_prefix(
            root, "check", exclusive=False, wait=wait, on_wait=on_wait, shown=str(prefix or root)
        )
        if root is not None
        else _nothing()
    )
    with lock:
        scan = scan_prefix(prefix, python)
        view = lock_view(snapshot, knowledge)
        changed = None
        if verify_files:
            changed = verify_records(scan, set(view.pip))
        findings = take_inventory(scan, view, changed).findings
        interrupted = interrupted_runs(Path(scan.prefix))
    return sorted(interrupted + findings, key=lambda f: f.sort_key)


def _nothing():
    return contextlib.nullcontext()


def environment_exit_code(
    static: list[Finding], environment: list[Finding], *, strict: bool
) -> int:
    """1 for any error, a warning of the lock files (as `check` without --env), or, with
    --strict only, a warning about the installed environment or the machine (LG218 /usr/local/cuda,
    LG213 a user-site copy, ...): clean-install's rule."""
    if failing(static) or any(f.severity == ERROR for f in environment):
        return 1
    return 1 if strict and any(f.severity == WARNING for f in environment) else 0


def interrupted_runs(prefix: Path) -> list[Finding]:
    """LG222: a clean-install (or a restore of one) that was killed left the environment half
    changed."""
    out = []
    for q in interrupted_quarantines(prefix):
        if q.state == "restore-interrupted":
            message = (
                f"the restore of clean-install {q.id} was interrupted ({q.put_back} of {q.count} "
                "quarantined files put back): the environment is half restored"
            )
            fix = (
                f"`lockguard restore {q.id} --prefix {prefix}` finishes it "
                "(a clean-install finishes it first, too)"
            )
        else:
            message = (
                f"clean-install {q.id} was interrupted (last step: {q.phase or 'begin'}): the "
                "environment is half changed"
            )
            fix = (
                f"`lockguard restore {q.id} --prefix {prefix}` undoes it "
                "(a new clean-install undoes it first, too)"
            )
        out.append(
            codes.INTERRUPTED_RUN.finding(
                message,
                fix + "; the other findings may be its doing: fix this first",
                str(prefix / ".lockguard" / "quarantine" / q.id),
            )
        )
    return out
