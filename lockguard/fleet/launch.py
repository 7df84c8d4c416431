"""Command lines for the engines that lockguard drives as programs: Slurm's srun and its
labelled output, and the ClusterShell remote command. Pure: options in, argv and parsed output out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from lockguard.fleet.node_protocol import MARK, NodeOutput


@dataclass(frozen=True)
class SlurmOptions:
    nodes: int | None = None
    partition: str | None = None
    nodelist: str | None = None
    extra: tuple[str, ...] = ()  # more srun arguments, passed through as given


def srun_command(options: SlurmOptions, script: str, *, srun: str = "srun") -> list[str]:
    """One task on each of N nodes; --label prefixes every line with its task number so the nodes'
    outputs can be told apart; a node that fails does not end the others (--kill-on-bad-exit=0)."""
    if options.nodes is None and not options.nodelist:
        raise ValueError("--nodes or --nodelist is needed for --via slurm")
    argv = [srun]
    if options.nodes is not None:
        argv.append(f"--nodes={options.nodes}")
    argv += ["--ntasks-per-node=1", "--label", "--kill-on-bad-exit=0", "--job-name=lockguard-fleet"]
    if options.partition:
        argv.append(f"--partition={options.partition}")
    if options.nodelist:
        argv.append(f"--nodelist={options.nodelist}")
    argv += list(options.extra)
    return argv + ["sh", "-c", script]


_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


def split_labelled(
    stdout: str, stderr: str, *, timed_out: bool, tasks: int | None
) -> list[NodeOutput]:
    """srun --label output -> one NodeOutput per task. The node's name is the one its script
    printed (SLURMD_NODENAME); a task that printed nothing is named by its number."""
    out: dict[int, list[str]] = {}
    err: dict[int, list[str]] = {}
    for text, into in ((stdout, out), (stderr, err)):
        for line in text.splitlines():
            match = _LABEL.match(line)
            if match:
                into.setdefault(int(match.group(1)), []).append(match.group(2))
    ids = set(out) | set(err) | set(range(tasks or 0))
    outputs = []
    for task in sorted(ids):
        lines = out.get(task, [])
        named = any(line.startswith(f"{MARK} node ") for line in lines)
        outputs.append(
            NodeOutput(
                None if named else f"slurm-task-{task}",
                "\n".join(lines) + "\n",
                "\n".join(err.get(task, [])),
                timed_out=timed_out,
                problem=None if lines else "srun started no output for this task",
            )
        )
    return outputs


def remote_command(script: str) -> str:
    """The command ClusterShell runs on each node: the script under sh, whatever the login shell."""
    return "sh -c " + shlex.quote(script)
