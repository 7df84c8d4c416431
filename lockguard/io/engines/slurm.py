"""`fleet run --via slurm`: one srun step with one task on each of N nodes (inside an allocation,
or asking for one), every line labelled with its task so the nodes' reports can be told apart.
The node's name is SLURMD_NODENAME, printed by the node script before anything else."""

from __future__ import annotations

import os
import signal
import subprocess

from lockguard.fleet.launch import SlurmOptions, split_labelled, srun_command
from lockguard.fleet.node_protocol import NodeOutput
from lockguard.io.engines import require_program

HINT = (
    "run `lockguard fleet run --via slurm` on a Slurm login node (where srun is on PATH), "
    "or use --via clush"
)


def run(script: str, *, options: SlurmOptions, timeout: float) -> list[NodeOutput]:
    srun = require_program("srun", "slurm", HINT)
    argv = srun_command(options, script, srun=srun)
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        # srun forwards SIGTERM to its tasks and ends the step; what they printed is kept
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            stdout, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        timed_out = True
    outputs = split_labelled(stdout, stderr, timed_out=timed_out, tasks=options.nodes)
    if not outputs and stderr.strip():
        outputs.append(
            NodeOutput(
                "srun",
                "",
                stderr,
                proc.returncode,
                problem="srun: " + stderr.strip().splitlines()[-1],
            )
        )
    return outputs
