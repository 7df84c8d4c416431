"""`lockguard fleet run | report | manifest`: the doctor on every node through an engine, and the
merge of per-node reports into one drift table."""

from __future__ import annotations

import json
from pathlib import Path

import click

from lockguard.app import fleet_session
from lockguard.cli.common import get_ui, intent_option, json_flag
from lockguard.fleet import render
from lockguard.fleet.render_html import page

ENGINES = ("ray", "slurm", "clush", "kubectl")
DEFAULT_TIMEOUT = 300.0


def _format_options(func):
    func = json_flag(func)
    func = click.option(
        "--strict",
        is_flag=True,
        help="A node with a warning deviates too (default: errors and another lock deviate).",
    )(func)
    func = click.option(
        "--output",
        "output",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Write the report to FILE instead of stdout.",
    )(func)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "html"]),
        default="text",
        show_default=True,
    )(func)


def _node_options(func):
    for decorator in reversed(
        [
            click.option(
                "--env",
                "env_prefix",
                default=None,
                metavar="PREFIX",
                help="The environment to check on each node (a prefix there): doctor on its "
                "python, and `check --env`.",
            ),
            click.option(
                "--python",
                "python_exe",
                default=None,
                metavar="EXE",
                help="The interpreter doctor probes on each node (a path there; doctor only).",
            ),
            click.option(
                "--lockguard",
                "lockguard_cmd",
                default=None,
                metavar="CMD",
                help="How to run lockguard on the nodes (default: the node's `python -m lockguard` "
                "under Ray, else `lockguard` on PATH), e.g. /shared/venv/bin/lockguard.",
            ),
            intent_option,
        ]
    ):
        func = decorator(func)
    return func


@click.group()
def fleet() -> None:
    """Run doctor on every node of a cluster and merge the reports into one drift table."""


@fleet.command()
@click.option(
    "--via",
    "engine",
    type=click.Choice(ENGINES),
    required=True,
    help="The engine that reaches the nodes.",
)
@click.option("--address", default="auto", show_default=True, help="ray: the cluster's address.")
@click.option(
    "--ray-runtime-env",
    "runtime_env",
    default=None,
    metavar="JSON",
    help='ray: the tasks\' runtime_env, e.g. \'{"pip": ["lockguard"]}\' to install lockguard on '
    "the nodes.",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="slurm: how many nodes (srun --nodes).",
)
@click.option("--partition", default=None, help="slurm: the partition.")
@click.option("--nodelist", default=None, help="slurm: the nodes (srun --nodelist).")
@click.option(
    "--srun-arg",
    "srun_args",
    multiple=True,
    metavar="ARG",
    help="slurm: one more srun argument (repeatable).",
)
@click.option(
    "--hosts", default=None, metavar="NODESET", help="clush: the hosts, e.g. 'gpu[01-16]'."
)
@click.option(
    "--clush-worker",
    "worker",
    type=click.Choice(["ssh", "exec", "rsh", "pdsh"]),
    default="ssh",
    show_default=True,
    help="clush: ClusterShell's worker (exec runs locally once per host, for tests).",
)
@click.option(
    "--fanout",
    type=click.IntRange(min=1),
    default=None,
    help="clush: at most this many hosts at once.",
)
@click.option(
    "--image", default=None, help="kubectl: the image with lockguard and the environment."
)
@click.option("--namespace", default=None, help="kubectl: the namespace.")
@click.option(
    "--node-selector",
    "node_selector",
    multiple=True,
    metavar="KEY=VALUE",
    help="kubectl: the nodes to run on (default nvidia.com/gpu.present=true).",
)
@click.option(
    "--gpus",
    type=click.IntRange(min=0),
    default=0,
    help="kubectl: nvidia.com/gpu per pod (0: all, unrequested).",
)
@_node_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Keep each node's report as DIR/<node>.json.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Nodes that do not answer in time are listed as unreachable.",
)
@_format_options
@click.pass_context
def run(
    ctx,
    engine,
    env_prefix,
    python_exe,
    lockguard_cmd,
    intent_path,
    out_dir,
    timeout,
    fmt,
    output,
    strict,
    **settings,
) -> int:
    """Run `lockguard doctor --json` (and `check --env`) once on every node, all at once, through
    Ray, Slurm, ClusterShell or Kubernetes; print the merged report. Exit 0 when every node matches
    the lock with no error (--strict: no warning either), 1 otherwise, 2 on bad input, 4 when the
    engine cannot be reached."""
    ui = get_ui(ctx, "fleet run")
    ui.json_mode = fmt == "json"
    if env_prefix and python_exe:
        raise click.UsageError("--env and --python name the same thing twice: give one")
    report = fleet_session.run(
        ui,
        engine=engine,
        env_prefix=env_prefix,
        python_exe=python_exe,
        lockguard_cmd=lockguard_cmd,
        intent_path=intent_path,
        settings=settings,
        timeout=timeout,
        out_dir=out_dir,
        strict=strict,
    )
    return _emit(ui, report, fmt, output)


@fleet.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@intent_option
@_format_options
@click.pass_context
def report(ctx, paths, intent_path, fmt, output, strict) -> int:
    """Merge per-node reports (folders of *.json from `fleet run --out`, or `doctor --json` files)
    into groups of identical nodes and one drift table. Exit 0 when every node matches the lock with
    no error (--strict: no warning either), 1 otherwise, 2 when a report cannot be read (the others
    are still merged)."""
    ui = get_ui(ctx, "fleet report")
    ui.json_mode = fmt == "json"
    merged = fleet_session.report(list(paths), intent_path=intent_path, strict=strict)
    return _emit(ui, merged, fmt, output)


@fleet.command()
@click.option(
    "--image", required=True, help="An image with lockguard and the environment to check."
)
@click.option(
    "--kind",
    type=click.Choice(["daemonset", "job"]),
    default="daemonset",
    show_default=True,
    help="A one-shot DaemonSet (every selected node) or an Indexed Job of --nodes pods, one per "
    "node.",
)
@click.option("--nodes", type=click.IntRange(min=1), default=None, help="job: how many nodes.")
@click.option("--namespace", default=None)
@click.option(
    "--node-selector",
    "node_selector",
    multiple=True,
    metavar="KEY=VALUE",
    help="The nodes to run on (default nvidia.com/gpu.present=true).",
)
@click.option(
    "--gpus",
    type=click.IntRange(min=0),
    default=0,
    help="nvidia.com/gpu per pod (0: all, unrequested).",
)
@click.option(
    "--run-id",
    default="manual",
    show_default=True,
    help="Labels the objects: lockguard.dev/fleet-run=ID.",
)
@_node_options
@click.option(
    "--output",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the manifest to FILE instead of stdout.",
)
@click.pass_context
def manifest(
    ctx,
    image,
    kind,
    nodes,
    namespace,
    node_selector,
    gpus,
    run_id,
    env_prefix,
    python_exe,
    lockguard_cmd,
    intent_path,
    output,
) -> int:
    """Print the Kubernetes manifest `fleet run --via kubectl` applies, for `kubectl apply -f`:
    the node script in a one-shot DaemonSet (or a Job), LOCKGUARD_NODE from spec.nodeName, the
    project's intent and lock in a ConfigMap. Read the reports with `kubectl logs` and
    `fleet report`."""
    ui = get_ui(ctx, "fleet manifest")
    if kind == "job" and not nodes:
        raise click.UsageError("--kind job needs --nodes N")
    text = fleet_session.manifest(
        intent_path=intent_path,
        env_prefix=env_prefix,
        python_exe=python_exe,
        lockguard_cmd=lockguard_cmd,
        run_id=run_id,
        settings={
            "image": image,
            "namespace": namespace,
            "kind": kind,
            "nodes": nodes,
            "gpus": gpus,
            "node_selector": node_selector,
        },
    )
    if output is not None:
        fleet_session.write_report(output, text)
        ui.info(f"wrote {output}")
    else:
        ui.out(text.rstrip("\n"))
    return 0


def _emit(ui, report, fmt: str, output: Path | None) -> int:
    """Print (or write to --output) the merged report; the exit code of the contract."""
    code = report.exit_code
    if fmt == "json":
        text = (
            json.dumps(
                ui.envelope(render.json_data(report), ok=code == 0, exit_code=code),
                indent=2,
                sort_keys=True,
            )
            + "\n"
        )
    elif fmt == "html":
        text = page(report)
    else:
        text = render.text(report)
    if output is not None:
        fleet_session.write_report(output, text)
        ui.info(f"wrote {output}: {render.summary(report)}")
    else:
        ui.out(text.rstrip("\n"))
    for file, why in report.unreadable:
        ui.error(f"{file}: {why}", hint="the other reports were merged; fix or remove this file")
    if not report.groups:
        ui.error("no node report to merge")
    return code
