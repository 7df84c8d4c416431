"""`fleet run --via clush`: ClusterShell runs the node script on every host of a NodeSet
(`gpu[01-16]`) with its own fan-out (ssh by default; its exec worker runs the command locally once
per host, which tests the whole path without SSH). A host ssh cannot reach is unreachable in ssh's
own words; when ssh reaches none of them, fleet run stops there: exit 2 when no host name
resolves (a typo in --hosts), else exit 4."""

from __future__ import annotations

from lockguard.errors import InputError
from lockguard.fleet.launch import RESOLVE, remote_command, ssh_words
from lockguard.fleet.node_protocol import MARK, NodeOutput
from lockguard.io.engines import EngineDown, EngineRefused, require, require_program

WORKERS = ("ssh", "exec", "rsh", "pdsh")
QUOTED_HOSTS = 5  # hosts whose ssh words are listed when ssh reached none


def hosts_of(hosts: str) -> list[str]:
    require("ClusterShell", "clush")
    # an optional engine (the clush extra), imported when used
    from ClusterShell.NodeSet import NodeSet, NodeSetParseError

    try:
        names = list(NodeSet(hosts))
    except NodeSetParseError as exc:
        raise InputError(
            f"--hosts {hosts!r} is not a node set: {exc}",
            key="--hosts",
            hint="ClusterShell's syntax: gpu[01-16], node[1-4,9], a,b",
        ) from exc
    if not names:
        raise InputError("--hosts names no host", key="--hosts", hint="e.g. --hosts 'gpu[01-16]'")
    return names


def run(
    script: str, *, hosts: str, timeout: float, worker: str = "ssh", fanout: int | None = None
) -> list[NodeOutput]:
    require("ClusterShell", "clush")
    from ClusterShell.Task import task_self  # an optional engine (the clush extra)

    names = hosts_of(hosts)
    if worker != "exec":  # ClusterShell runs it; absent, every host would fail without a word
        require_program(
            worker, "clush", f"install {worker} on this machine, or pick another --clush-worker"
        )
    task = task_self()  # ClusterShell's task of this thread: its workers answer only here
    task.set_default("distant_workername", worker)
    if fanout:
        task.set_info("fanout", fanout)
    command = remote_command(script)
    if worker == "exec":
        # the exec worker expands %h-style patterns: escape the script's, and name each "node"
        command = "LOCKGUARD_NODE=%h " + command.replace("%", "%%")
    running = task.shell(command, nodes=",".join(names), timeout=timeout, stderr=True, stdin=False)
    task.run()
    timed_out = set(running.iter_keys_timeout())
    outputs = []
    for name in names:
        stdout = (running.node_buffer(name) or b"").decode(errors="replace")
        stderr = (running.node_error_buffer(name) or b"").decode(errors="replace")
        try:
            code = running.node_retcode(name)
        except KeyError:  # no exit status: it timed out
            code = None
        problem = None
        if MARK not in stdout and code == 255 and worker == "ssh":
            problem = "ssh failed: " + ssh_words(stderr)
        outputs.append(
            NodeOutput(name, stdout, stderr, code, timed_out=name in timed_out, problem=problem)
        )
    _reached_none(outputs, hosts)
    return outputs


def _reached_none(outputs: list[NodeOutput], hosts: str) -> None:
    """ssh gave up on every host: no node report to merge, ssh's words instead."""
    failed = [o for o in outputs if o.problem and o.problem.startswith("ssh failed: ")]
    if not failed or len(failed) < len(outputs):
        return
    said = [f"{o.node}: {o.problem}" for o in failed[:QUOTED_HOSTS]]
    if len(failed) > QUOTED_HOSTS:
        said.append(f"... and {len(failed) - QUOTED_HOSTS} more hosts")
    if all(RESOLVE in (o.problem or "") for o in failed):
        raise EngineRefused(
            f"no host of --hosts {hosts} resolves: {said[0]}",
            said=said[1:],
            key="--hosts",
            hint="check the host names (ClusterShell's syntax: gpu[01-16]) and that this "
            "machine resolves them (`getent hosts NAME`)",
        )
    raise EngineDown(
        f"ssh reached no host of --hosts {hosts} ({len(failed)} "
        f"{'host' if len(failed) == 1 else 'hosts'}): {said[0]}",
        said=said[1:],
        hint="check that `ssh HOST true` works from here without a password (BatchMode)",
    )
