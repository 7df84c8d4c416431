"""`fleet run --via slurm`: one srun step with one task on each of N nodes (inside an allocation,
or asking for one), every line labelled with its task so the nodes' reports can be told apart.
The node's name is SLURMD_NODENAME, printed by the node script before anything else.

srun's own lines are read as they come: a job that waits in the queue is said at once (and waited
for up to --timeout); one Slurm queued with a reason it cannot start it now (more nodes than the
partition has, nodes down or drained) is stopped at once, exit 4; srun that gives up before any
task ran is exit 2 in its words (an invalid partition), or exit 4 when it cannot reach the
controller.
"""

from __future__ import annotations

from collections.abc import Callable

from lockguard.fleet.launch import SlurmOptions, SrunLog, split_labelled, srun_command
from lockguard.fleet.node_protocol import NodeOutput
from lockguard.io.engines import EngineDown, EngineRefused, require_program
from lockguard.io.run import Finished, run_bounded

HINT = (
    "run `lockguard fleet run --via slurm` on a Slurm login node (where srun is on PATH), "
    "or use --via clush"
)
TERM_GRACE = 10.0  # srun forwards SIGTERM to its tasks, or gives back a pending job
OUTPUT_CAP = 256 << 20  # all nodes' reports come through this one stdout (about 11 kB a node)


def run(
    script: str,
    *,
    options: SlurmOptions,
    timeout: float,
    say: Callable[[str], None] = lambda _message: None,
) -> list[NodeOutput]:
    srun = require_program("srun", "slurm", HINT)
    log = SrunLog()

    def heard(line: str) -> None:
        news = log.feed(line)
        if news and log.cannot_start():
            return  # stopped at once: the error quotes srun
        if news and log.waiting:
            say(f"{news}: waiting for the nodes up to --timeout ({timeout:g} s, the queue counts)")
        elif news:
            say(news)

    done = run_bounded(
        srun_command(options, script, srun=srun),
        timeout=timeout,
        what="srun",
        cap=OUTPUT_CAP,
        stderr_cap=OUTPUT_CAP,
        on_line=log.out,
        on_stderr_line=heard,
        stop=log.cannot_start,
        term_grace=TERM_GRACE,
    )
    if not log.started:
        _no_task(done, log, options, timeout)
    return split_labelled(done.stdout, done.stderr, timed_out=done.timed_out, tasks=options.nodes)


def _no_task(done: Finished, log: SrunLog, options: SlurmOptions, timeout: float) -> None:
    """srun ran no task: say why in srun's words (exit 2 or 4), or return when it has none."""
    said = log.words()
    where = f"--partition {options.partition}" if options.partition else "--partition"
    if done.stopped:
        raise EngineDown(
            f"{done.stopped} (stopped at once; srun gave the job back)",
            said=said,
            hint="ask for fewer --nodes, another --partition or other --nodelist nodes "
            "(`sinfo` shows each partition's nodes and their state), or run inside an "
            "allocation you already hold (salloc)",
        )
    if log.job and not log.granted and done.timed_out:
        raise EngineDown(
            f"Slurm did not start job {log.job} within --timeout {timeout:g} s: it waited in the "
            "queue (srun gave it back)",
            said=said,
            hint="raise --timeout (the queue counts), run inside an allocation you already hold "
            "(salloc), or ask for fewer --nodes",
        )
    if done.returncode is None and not done.timed_out:
        raise EngineDown(f"srun did not run: {done.problem}", said=said, hint=HINT)
    if log.unreachable():
        raise EngineDown(
            "srun cannot reach the Slurm controller",
            said=said,
            hint="check that `sinfo` answers here (slurmctld up, munge running)",
        )
    if said and not done.timed_out:
        raise EngineRefused(
            f"srun refused the job (exit {done.returncode}): {said[0]}",
            said=said[1:],
            hint=f"srun names what it refused: check {where}, --nodes, --nodelist and "
            "--srun-arg (`sinfo -s` lists the partitions)",
        )
    if done.timed_out and not log.granted:
        raise EngineDown(
            f"srun started no task within --timeout {timeout:g} s and no job was granted",
            said=said,
            hint="raise --timeout, or check that `sinfo` answers here",
        )
    if done.returncode not in (0, None) and not said:
        raise EngineDown(
            f"srun exited {done.returncode} before any task ran, saying nothing", said=[], hint=HINT
        )
