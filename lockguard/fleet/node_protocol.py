"""What runs on each node, and how its output becomes a fleet node record.

Every engine runs the same POSIX shell script on every node (Ray runs it from its task): it names
the node, finds lockguard, runs `lockguard doctor --json` and, with an environment, `lockguard
check --env PREFIX --format json`, between marker lines. The markers let one stream (an srun with
--label, a pod log) carry both reports and say how far a node got. The script holds no `%`
(ClusterShell's exec worker expands `%h`-style patterns). Pure: text in, text out.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

from lockguard.fleet.records import FAILED, OK, UNREACHABLE, fleet_node_record
from lockguard.model import codes
from lockguard.model.json_types import JsonObject

MARK = "@@lockguard-fleet"
# the Ray task (and anyone else) may point the script at an interpreter that has lockguard installed
PYTHON_VARIABLE = "LOCKGUARD_FLEET_PYTHON"
MISSING_HINT = (
    "install lockguard on every node (`pip install lockguard` into the environment the nodes "
    "run, or a venv on a shared filesystem passed as --lockguard /shared/venv/bin/lockguard; "
    'with Ray, --ray-runtime-env \'{"pip": ["lockguard"]}\')'
)


@dataclass(frozen=True)
class NodeRequest:
    """What each node runs: doctor against `intent` (a path the nodes see) on the interpreter
    `python`, or on the environment `env` (a prefix: doctor on its bin/python, plus `check --env
    PREFIX`)."""

    intent: str | None = None
    python: str | None = None
    env: str | None = None
    lockguard: str | None = None  # the command that runs lockguard on the nodes; None: find it
    doctor_timeout: float | None = None


@dataclass(frozen=True)
class NodeOutput:
    """What an engine got back from one node."""

    node: str | None  # the engine's name for it; None when only the script's header can say
    stdout: str
    stderr: str = ""
    returncode: int | None = None
    timed_out: bool = False
    problem: str | None = None  # the engine's own word on this node (not scheduled, pod failed...)


def node_script(request: NodeRequest) -> str:
    doctor = ["doctor", "--json"]
    python = request.python or (request.env.rstrip("/") + "/bin/python" if request.env else None)
    if python:
        doctor += ["--python", python]
    if request.intent:
        doctor += ["--intent", request.intent]
    if request.doctor_timeout:
        doctor += ["--timeout", f"{request.doctor_timeout:g}"]
    lines = [
        'node="${LOCKGUARD_NODE:-${SLURMD_NODENAME:-$(hostname)}}"',
        'export LOCKGUARD_NODE="$node"',
        f'echo "{MARK} node $node"',
        *_find_lockguard(request.lockguard),
        f'echo "{MARK} doctor"',
        '"$@" ' + shlex.join(doctor) + " </dev/null",
        f'rc=$?; echo; echo "{MARK} end $rc"',
    ]
    if request.env:
        check = ["check", "--env", request.env, "--format", "json", "--no-cache"]
        if request.intent:
            check += ["--intent", request.intent]
        lines += [
            f'echo "{MARK} check"',
            '"$@" ' + shlex.join(check) + " </dev/null",
            f'rc=$?; echo; echo "{MARK} end $rc"',
        ]
    script = "\n".join(lines) + "\n"
    if "%" in script:
        raise ValueError("a path with '%' cannot be passed to the nodes")
    return script


def _find_lockguard(command: str | None) -> list[str]:
    if command:
        words = shlex.split(command)
        return [
            f"set -- {shlex.join(words)}",
            'if ! command -v "$1" >/dev/null 2>&1; then',
            f'  echo "{MARK} missing $1 not found on this node"; exit 127',
            "fi",
        ]
    return [
        (
            f'if [ -n "${{{PYTHON_VARIABLE}:-}}" ] && '
            f'"${PYTHON_VARIABLE}" -c "import lockguard" >/dev/null 2>&1; then'
        ),
        f'  set -- "${PYTHON_VARIABLE}" -m lockguard',
        "elif command -v lockguard >/dev/null 2>&1; then",
        "  set -- lockguard",
        "else",
        (
            f'  echo "{MARK} missing no lockguard on '
            f'PATH${{{PYTHON_VARIABLE}:+ and none importable by ${PYTHON_VARIABLE}}}"'
        ),
        "  exit 127",
        "fi",
    ]


@dataclass
class _Sections:
    node: str | None = None
    missing: str | None = None
    doctor: list[str] | None = None
    doctor_rc: int | None = None
    check: list[str] | None = None
    check_rc: int | None = None


def _sections(stdout: str) -> _Sections:
    out = _Sections()
    current: list[str] | None = None
    section = None
    for line in stdout.splitlines():
        if not line.startswith(MARK + " "):
            if current is not None:
                current.append(line)
            continue
        word, _, rest = line[len(MARK) + 1 :].partition(" ")
        if word == "node":
            out.node = rest.strip() or None
        elif word == "missing":
            out.missing = rest.strip()
        elif word in ("doctor", "check"):
            section, current = word, []
            setattr(out, word, current)
        elif word == "end" and section:
            setattr(out, f"{section}_rc", int(rest) if rest.strip().lstrip("-").isdigit() else None)
            section, current = None, None
    return out


def parse_node_output(output: NodeOutput, *, engine: str, timeout: float | None) -> JsonObject:
    """The fleet node record (records.fleet_node_record) for one node's output."""
    parts = _sections(output.stdout)
    node = output.node or parts.node or "unknown"

    def failed(message: str, hint: str | None = None) -> JsonObject:
        return fleet_node_record(node, engine=engine, status=FAILED, message=message, hint=hint)

    if parts.missing is not None:
        return failed(f"lockguard is not installed on this node: {parts.missing}", MISSING_HINT)
    if parts.doctor is None or parts.doctor_rc is None:
        if output.timed_out:
            how = f"within {timeout:g} s" if timeout else "in time"
            step = "doctor started but did not finish" if parts.doctor is not None else "no answer"
            why = f" ({output.problem})" if output.problem else ""
            return fleet_node_record(
                node, engine=engine, status=UNREACHABLE, message=f"{step} {how}{why}"
            )
        if output.problem:
            return fleet_node_record(
                node, engine=engine, status=UNREACHABLE, message=output.problem
            )
        return failed("the node script did not run to the end" + _tail(output))
    doctor, problem = _envelope(parts.doctor, "doctor")
    if doctor is None:
        return failed(f"lockguard doctor (exit {parts.doctor_rc}) {problem}" + _tail(output))
    check = None
    if parts.check is not None:
        envelope, problem = (
            _envelope(parts.check, "check") if parts.check_rc is not None else (None, "")
        )
        if envelope is None:
            if parts.check_rc is None:
                how = f"within {timeout:g} s" if timeout else "in time"
                problem = f"lockguard check --env did not finish {how}"
            else:
                problem = f"lockguard check --env (exit {parts.check_rc}) {problem}" + _tail(output)
            check = {
                "exit_code": parts.check_rc,
                "findings": [
                    {
                        "code": codes.NODE_CHECK_FAILED.code,
                        "severity": codes.NODE_CHECK_FAILED.severity,
                        "message": problem,
                        "hint": "run `lockguard check --env PREFIX` on that node to see why",
                    }
                ],
            }
        else:
            check = {"exit_code": envelope.get("exit_code"), **envelope["data"]}
    return fleet_node_record(node, engine=engine, status=OK, doctor=doctor["data"], check=check)


def _envelope(lines: list[str], command: str) -> tuple[JsonObject | None, str]:
    text = "\n".join(lines).strip()
    if not text:
        return None, "printed nothing on stdout"
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        return (
            None,
            f"printed something that is not its JSON report ({exc.msg} at line {exc.lineno})",
        )
    if not isinstance(body, dict) or body.get("command") != command:
        return None, "printed JSON that is not its report"
    if isinstance(body.get("error"), dict):
        error = body["error"]
        return None, f"failed: {error.get('message')}" + (
            f" ({error['hint']})" if error.get("hint") else ""
        )
    if not isinstance(body.get("data"), dict):
        return None, "printed an envelope without data"
    return body, ""


def _tail(output: NodeOutput) -> str:
    lines = [line for line in output.stderr.strip().splitlines() if line.strip()][-3:]
    return (": " + " | ".join(lines)) if lines else ""
