"""What `lockguard fleet` does between its options and the engines: the project the nodes are
judged against, one engine call for all nodes, the per-node files, the merged report and its
output. The engines live in lockguard.io.engines, the merge in lockguard.fleet."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from lockguard import interrupts
from lockguard.app.reporting import Messages
from lockguard.errors import InputError
from lockguard.fleet.groups import FleetReport, merge
from lockguard.fleet.k8s import PROJECT_MOUNT, ManifestOptions, manifests
from lockguard.fleet.launch import SlurmOptions
from lockguard.fleet.node_protocol import NodeRequest, node_script, parse_node_output
from lockguard.fleet.records import node_report
from lockguard.io.engines import clush, kubectl, ray_engine, slurm
from lockguard.io.engines.report_files import read_reports, write_node_files, write_output
from lockguard.io.project.intent_file import find_intent, load_intent, source_of
from lockguard.io.project.project_files import read_snapshot
from lockguard.io.project.project_paths import intent_location
from lockguard.io.read import INTENT_LIMIT, read_text
from lockguard.lockfiles.headers import body_hash_of
from lockguard.lockfiles.yaml_adapter import dump_all
from lockguard.model.wording import counted

UNNAMED_ENV = (
    "note: no --env or --python: on each node doctor probes the Python lockguard runs under "
    "there ($VIRTUAL_ENV or $CONDA_PREFIX when set, else lockguard's own interpreter; under "
    "--via ray the worker's), which need not be the environment your jobs use: pass "
    "--env PREFIX or --python EXE (paths on the nodes) to check that one"
)


@dataclass(frozen=True, slots=True)
class Project:
    intent: Path  # absolute
    # relative name -> text: the intent and its lock files, shipped to nodes that lack them
    files: Mapping[str, str]
    lock_hash: str | None
    # with [profiles]: each profile's requirements lock (body hash); nodes are judged by the one
    # their doctor picked
    profile_locks: dict[str, str] | None = None


def run(
    ui: Messages,
    *,
    engine: str,
    env_prefix: str | None,
    python_exe: str | None,
    lockguard_cmd: str | None,
    intent_path: Path | None,
    settings: dict,
    timeout: float,
    out_dir: Path | None,
    strict: bool,
) -> FleetReport:
    """`lockguard fleet run`'s sequence: the project the nodes are judged against (none: they
    compare with no lock), doctor on every node through `engine` (each record kept in `out_dir`
    when given), the reports merged."""
    project = load_project(intent_path, required=intent_path is not None)
    request = NodeRequest(python=python_exe, env=env_prefix, lockguard=lockguard_cmd)
    ui.info(
        f"lockguard fleet: doctor on every node through {engine}"
        + (
            f", judged against {project.intent}"
            if project
            else ", no lockguard.toml here: nodes compare with no lock"
        )
    )
    if not env_prefix and not python_exe:
        ui.info(UNNAMED_ENV)
    reports, written = node_reports(
        engine, request, settings, timeout, project, out_dir, say=ui.info
    )
    if out_dir is not None:
        ui.info(f"wrote {counted(len(written), 'node report')} to {out_dir}")
    lock = project.lock_hash if project else None
    return merge(
        reports,
        lock=lock,
        lock_source=f"{project.intent}" if project and lock else None,
        strict=strict,
        profile_locks=project.profile_locks if project else None,
    )


def report(paths: list[Path], *, intent_path: Path | None, strict: bool) -> FleetReport:
    """`lockguard fleet report`'s sequence: stored per-node reports merged, judged against the
    project's lock when --intent names one (the unreadable files listed, the others merged)."""
    project = load_project(intent_path, required=True) if intent_path else None
    reports, unreadable = stored_reports(list(paths))
    lock = project.lock_hash if project else None
    return merge(
        reports,
        unreadable=unreadable,
        lock=lock,
        lock_source=str(project.intent) if project and lock else None,
        strict=strict,
        profile_locks=project.profile_locks if project else None,
    )


def manifest(
    *,
    intent_path: Path | None,
    env_prefix: str | None,
    python_exe: str | None,
    lockguard_cmd: str | None,
    run_id: str,
    settings: dict,
) -> str:
    """`lockguard fleet manifest`'s text: the Kubernetes objects `fleet run --via kubectl`
    applies (`settings`: image, namespace, kind, nodes, gpus, node_selector), the project's
    intent and lock in their ConfigMap."""
    project = load_project(intent_path, required=intent_path is not None)
    request = NodeRequest(
        python=python_exe,
        env=env_prefix,
        lockguard=lockguard_cmd,
        intent=f"{PROJECT_MOUNT}/{project.intent.name}" if project else None,
    )
    options = manifest_options(settings, project, run_id=run_id)
    return dump_all(manifests(options, node_script(request)))


def load_project(intent_path: Path | None, *, required: bool) -> Project | None:
    try:
        # the project is the folder the intent is in (a symlinked intent's own folder)
        path = Path(intent_location(intent_path or find_intent(Path.cwd())))
    except InputError:
        if required:
            raise
        return None
    intent = load_intent(path, validate=False)
    root = source_of(intent).root
    files = {str(path.relative_to(root)): read_text(path, what="intent file", limit=INTENT_LIMIT)}
    hashes: dict[str, str] = {}
    for one in intent.profiles or (intent,):
        snapshot = read_snapshot(one, scan_repo=False)
        requirements = snapshot.of_kind("requirements")
        if requirements and requirements.text:
            hashes[one.profile or ""] = "sha256:" + body_hash_of(requirements.text)
        for lock in snapshot.files:  # read once, safely, by read_snapshot
            if lock.text is not None:
                files[lock.path] = lock.text
    if intent.profiles:
        return Project(path, files, None, hashes)
    return Project(path, files, hashes.get(""))


def node_reports(
    engine: str,
    request,
    settings: dict,
    timeout: float,
    project: Project | None,
    out_dir: Path | None,
    say: Callable[[str], None] = lambda _message: None,
) -> tuple[list, list[Path]]:
    """Doctor on every node through `engine`, each node's output read into a report; with
    `out_dir`, each node's record kept as DIR/<node>.json (the paths written come back too).
    `say` hears what the engine tells at once (srun: the job waits in the queue)."""
    outputs = collect(
        engine, node_script, {**settings, "request": request}, timeout, project, say=say
    )
    records = [parse_node_output(o, engine=engine, timeout=timeout) for o in outputs]
    written: list[Path] = []
    if out_dir is not None:
        interrupts.now(
            f"interrupted while the node reports were written to {out_dir}: each one there is "
            "whole; run `lockguard fleet run` again for all of them"
        )
        written = write_node_files(out_dir, records)
        interrupts.now(f"interrupted after the node reports were written to {out_dir}")
        sources = [str(p) for p in written]
    else:
        sources = [f"{engine}:{r['node']}" for r in records]
    reports = [
        node_report(record, file=source, default_node=record["node"])
        for record, source in zip(records, sources, strict=True)
    ]
    return reports, written


def stored_reports(paths: list[Path]) -> tuple[list, list]:
    """The reports in these files and folders, and (file, why) for those that cannot be read."""
    return read_reports(paths)


def write_report(output: Path, text: str) -> None:
    """The merged report (or a manifest) written to --output, atomically."""
    write_output(output, text)
    interrupts.now(f"interrupted after {output} was written; it is whole")


def collect(
    engine: str,
    script_for,
    settings: dict,
    timeout: float,
    project: Project | None,
    *,
    say: Callable[[str], None] = lambda _message: None,
) -> list:
    """Run the node script on every node through `engine`; one NodeOutput per node."""
    base: NodeRequest = settings.pop("request")
    if engine == "ray":
        request = _with_intent(base, project.intent.name if project else None)
        return ray_engine.run(
            script_for(request),
            address=settings["address"],
            timeout=timeout,
            files=project.files if project else {},
            runtime_env=_runtime_env(settings),
        )
    request = _with_intent(base, str(project.intent) if project else None)
    if engine == "slurm":
        options = SlurmOptions(
            settings["nodes"],
            settings["partition"],
            settings["nodelist"],
            tuple(settings["srun_args"]),
        )
        if options.nodes is None and not options.nodelist:
            raise InputError(
                "--via slurm needs --nodes N or --nodelist LIST",
                key="--nodes",
                hint="e.g. --nodes 16 --partition gpu",
            )
        return slurm.run(script_for(request), options=options, timeout=timeout, say=say)
    if engine == "clush":
        if not settings["hosts"]:
            raise InputError(
                "--via clush needs --hosts NODESET", key="--hosts", hint="e.g. --hosts 'gpu[01-16]'"
            )
        return clush.run(
            script_for(request),
            hosts=settings["hosts"],
            timeout=timeout,
            worker=settings["worker"],
            fanout=settings["fanout"],
        )
    request = _with_intent(base, f"{PROJECT_MOUNT}/{project.intent.name}" if project else None)
    options = manifest_options(settings, project, run_id=uuid.uuid4().hex[:8])
    return kubectl.run(script_for(request), options=options, timeout=timeout, say=say)


def _runtime_env(settings: dict) -> dict | None:
    text = settings.get("runtime_env")
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"--ray-runtime-env is not JSON: {exc.msg} at column {exc.colno}",
            key="--ray-runtime-env",
            hint='e.g. --ray-runtime-env \'{"pip": ["lockguard"]}\'',
        ) from exc
    if not isinstance(value, dict):
        raise InputError(
            "--ray-runtime-env must be a JSON object",
            key="--ray-runtime-env",
            hint='e.g. --ray-runtime-env \'{"pip": ["lockguard"]}\'',
        )
    return value


def manifest_options(settings: dict, project: Project | None, *, run_id: str):
    if not settings.get("image"):
        raise InputError(
            "--via kubectl needs --image IMAGE: an image with lockguard and the environment "
            "to check",
            key="--image",
            hint="e.g. --image registry.example.com/train:2024-03",
        )
    files = dict(project.files) if project else {}
    nested = [name for name in files if "/" in name]
    if nested:
        raise InputError(
            f"{nested[0]}: a ConfigMap holds files of one folder only",
            key="--intent",
            hint="keep the lock files next to lockguard.toml for --via kubectl",
        )
    selector = {}
    for item in settings.get("node_selector") or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(
                f"--node-selector {item!r}: expected KEY=VALUE",
                key="--node-selector",
                hint="e.g. --node-selector nvidia.com/gpu.present=true",
            )
        selector[key] = value
    kwargs = {"node_selector": selector} if selector else {}
    return ManifestOptions(
        image=settings["image"],
        run_id=run_id,
        namespace=settings.get("namespace"),
        kind=settings.get("kind") or "daemonset",
        nodes=settings.get("nodes"),
        gpus=settings.get("gpus") or 0,
        project_files=files,
        **kwargs,
    )


def _with_intent(request, intent: str | None):
    return replace(request, intent=intent)
