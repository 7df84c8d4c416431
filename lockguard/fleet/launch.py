"""Command lines for the engines that lockguard drives as programs: Slurm's srun and its
labelled output, and the ClusterShell remote command; and the engines' own words (srun's lines,
ssh's, kubectl's) read into what lockguard says: bad input (exit 2), the engine cannot be reached
(exit 4), or one node's problem. Pure: options in, argv and parsed output out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
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
SAID_LINES = 3  # srun's lines quoted on a node that printed nothing


def split_labelled(
    stdout: str, stderr: str, *, timed_out: bool, tasks: int | None
) -> list[NodeOutput]:
    """srun --label output -> one NodeOutput per task. The node's name is the one its script
    printed (SLURMD_NODENAME); a task that printed nothing is named by its number, and srun's own
    error lines (not labelled: "srun: error: Task launch ... failed") are its problem."""
    out: dict[int, list[str]] = {}
    err: dict[int, list[str]] = {}
    said: list[str] = []
    for text, into in ((stdout, out), (stderr, err)):
        for line in text.splitlines():
            match = _LABEL.match(line)
            if match:
                into.setdefault(int(match.group(1)), []).append(match.group(2))
            elif into is err and _is_error(line):
                said.append(line.strip())
    ids = set(out) | set(err) | set(range(tasks or 0))
    silent = "srun started no output for this task"
    if said:
        silent += "; srun said: " + " | ".join(said[-SAID_LINES:])
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
                problem=None if lines else silent,
            )
        )
    return outputs


def _is_error(line: str) -> bool:
    return bool(re.match(r"^\s*(srun|slurmstepd(-\S+)?): error: ", line))


# -- srun's own lines, read as they come -----------------------------------------------------------

# srun's words (Slurm's src/api/allocate.c): the job waits in the queue; the nodes are granted
_QUEUED = re.compile(r"^srun: job (\d+) queued and waiting for resources\s*$")
_GRANTED = re.compile(r"^srun: job (\d+) has been allocated resources\s*$")
# The reasons slurmctld gives (src/common/slurm_errno.c) for a job it queues but cannot start now,
# which srun prints just before "queued and waiting": none clears by waiting a few minutes (limits,
# nodes down or drained, a held job). Plain busy nodes give no reason line.
CANNOT_START = (
    "Requested partition configuration not available now",
    "Required node not available (down, drained or reserved)",
    "Requested node configuration is not available",
    "Partition in DOWN state",
    "Job is in held state, pending scheduler release",
    "Requested reservation not usable now",
    "Requested account has breached requested QOS usage threshold",
)
# Slurm's words (slurm_errno.c, srun's allocate.c) when srun cannot talk to the controller
UNREACHABLE = (
    "Unable to contact slurm controller",
    "Slurm controller not responding",
    "Communication connection failure",
    "Message send failure",
    "Message receive failure",
    "Socket timed out on send/recv operation",
    "Zero Bytes were transmitted or received",
    "Protocol authentication error",
    "Incompatible versions of client and server code",
)
SAID_KEPT = 40  # srun's own lines kept: the first half and the last half


class SrunLog:
    """srun's own stderr lines (those --label did not prefix with a task number), read as they
    come: whether a task has started, whether the job waits in the queue and why."""

    __slots__ = ("said", "dropped", "job", "reason", "granted", "started")

    def __init__(self) -> None:
        self.said: list[str] = []
        self.dropped = 0
        self.job: str | None = None
        self.reason: str | None = None  # the line of CANNOT_START srun printed
        self.granted = False
        self.started = False

    def feed(self, line: str) -> str | None:
        """One stderr line; what to tell the user at once (srun's line: the job is queued, or
        its nodes were granted), else None."""
        if _LABEL.match(line):
            self.started = True
            return None
        line = line.strip()
        if not line:
            return None
        self._keep(line)
        if any(line.endswith(reason) for reason in CANNOT_START) and not _is_error(line):
            self.reason = line
        queued = _QUEUED.match(line)
        if queued:
            self.job = queued.group(1)
            return line
        if _GRANTED.match(line):
            self.granted = True
            return line
        return None

    def out(self, line: str) -> None:
        """One stdout line: a task's (labelled) means the nodes were granted and run."""
        if not self.started and _LABEL.match(line):
            self.started = True

    def _keep(self, line: str) -> None:
        if len(self.said) >= SAID_KEPT:
            del self.said[SAID_KEPT // 2]
            self.dropped += 1
        self.said.append(line)

    def cannot_start(self) -> str | None:
        """Why srun must be stopped now: Slurm queued the job and said it cannot start it."""
        if self.job and self.reason and not (self.granted or self.started):
            return f"Slurm queued job {self.job} and cannot start it now"
        return None

    @property
    def waiting(self) -> bool:
        """The job is in the queue: no node granted yet."""
        return self.job is not None and not (self.granted or self.started)

    def words(self) -> list[str]:
        """srun's lines to quote, most telling first: its errors, else all of them."""
        errors = [line for line in self.said if _is_error(line)]
        return errors or list(self.said)

    def unreachable(self) -> bool:
        return any(phrase in line for line in self.said for phrase in UNREACHABLE)


# -- ssh's words (ClusterShell's ssh worker) -------------------------------------------------------

RESOLVE = "Could not resolve hostname"


def ssh_words(stderr: str) -> str:
    """What ssh said when it gave up on a host (exit 255): its own lines ("ssh: ..."), else the
    last lines it printed; never only the last line ("lost connection" after the reason)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    own = [line for line in lines if line.startswith("ssh: ")]
    return " | ".join((own or lines)[-SAID_LINES:]) or "ssh printed nothing"


# -- kubectl's words -------------------------------------------------------------------------------

# client-go's log lines ("E1202 02:24:26.580332   15166 memcache.go:265] ..."): kubectl repeats
# them before its own one-line verdict
_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [^\]]+\] ")
# what the API server refuses in lockguard's own request: the options are what to change
_REFUSED = re.compile(
    r"\((NotFound|BadRequest|Invalid|AlreadyExists)\)|is invalid: |unable to parse requirement"
)


def kubectl_words(stderr: str, stdout: str = "") -> list[str]:
    """kubectl's own lines, without client-go's log lines when it said anything else."""
    lines = [line.strip() for line in (stderr or stdout).splitlines() if line.strip()]
    own = [line for line in lines if not _KLOG.match(line)]
    return (own or lines)[-SAID_LINES:] or ["kubectl printed nothing"]


def kubectl_refused(words: Sequence[str]) -> bool:
    """The API server refused the request as lockguard built it from the options (a namespace
    that does not exist, a selector or an object it calls invalid): bad input, not unreachable."""
    return any(_REFUSED.search(line) for line in words)


def remote_command(script: str) -> str:
    """The command ClusterShell runs on each node: the script under sh, whatever the login shell."""
    return "sh -c " + shlex.quote(script)
