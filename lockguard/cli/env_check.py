"""`lockguard check --env PREFIX | --python EXE`: the installed environment against the lock."""

from __future__ import annotations

import platform as host_platform
from pathlib import Path

from lockguard.check.lock_facts import lock_facts
from lockguard.check.snapshot import Snapshot
from lockguard.install.inventory import LockView, take_inventory
from lockguard.knowledge.tables import Knowledge
from lockguard.model.finding import Finding


def host_conda_platform() -> str:
    machine = host_platform.machine().lower()
    return {"x86_64": "linux-64", "amd64": "linux-64", "aarch64": "linux-aarch64", "arm64": "linux-aarch64",
            "ppc64le": "linux-ppc64le"}.get(machine, "linux-64")


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
    return LockView(pip=dict(facts.pip), conda=conda, conda_solved=solved,
                    cuda=str(cuda.major_minor) if cuda else None, nccl=nccl, cudnn=cudnn)


def must_be_environment(root: Path, named: str | None = None, *, hint: str) -> Path:
    """The real path of `root`, which must be an environment: a venv (pyvenv.cfg) or a conda prefix
    (conda-meta/). Never /, /usr, a file or a FIFO: InputError naming it."""
    import os

    from lockguard.errors import InputError

    real = Path(os.path.realpath(root))
    if str(real) == "/" or not ((real / "pyvenv.cfg").is_file() or (real / "conda-meta").is_dir()):
        raise InputError(f"{named or root} is not an environment: it has neither a pyvenv.cfg (a venv) nor a "
                         "conda-meta/ folder (a conda prefix)", file=str(root), hint=hint)
    return real


def environment_findings(snapshot: Snapshot, knowledge: Knowledge, *, prefix: Path | None, python: Path | None,
                         verify_files: bool = False) -> list[Finding]:
    from lockguard.io.env.prefix_scan import scan_prefix

    if prefix is not None:  # --env names an environment; --python may be any interpreter, a base one too
        must_be_environment(prefix, hint="--env takes a venv or a conda prefix; for another installation pass "
                            "its interpreter with --python EXE")
    scan = scan_prefix(prefix, python)
    view = lock_view(snapshot, knowledge)
    changed = None
    if verify_files:
        from lockguard.io.env.record_verify import verify_records

        changed = verify_records(scan, set(view.pip))
    findings = take_inventory(scan, view, changed).findings + interrupted_runs(Path(scan.prefix))
    return sorted(findings, key=lambda f: f.sort_key)


def interrupted_runs(prefix: Path) -> list[Finding]:
    """LG222: a clean-install that was killed left the environment half changed."""
    from lockguard.io.env.quarantine import interrupted_quarantines
    from lockguard.model.finding import ERROR

    return [Finding("LG222", ERROR, f"clean-install {q.id} was interrupted (last step: {q.phase or 'begin'}): the "
                    "environment is half changed", f"`lockguard restore {q.id} --prefix {prefix}` undoes it (a new "
                    "clean-install undoes it first, too)", str(prefix / ".lockguard" / "quarantine" / q.id))
            for q in interrupted_quarantines(prefix)]
