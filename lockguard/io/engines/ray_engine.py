"""`fleet run --via ray`: one task on every alive node of a Ray cluster, pinned to it with
NodeAffinitySchedulingStrategy (soft=False), all submitted at once and awaited together.

The node is named by the LOCKGUARD_NODE its raylet's environment sets, else by its host name, or by
its Ray node id when two nodes share a host name (a cluster of several raylets on one machine). The
task itself is standard-library code shipped by value (lockguard.io.engines.ray_task and the
runner it uses, lockguard.io.run), so a node without lockguard answers that it has none.

An address nothing answers on, or where something other than a gRPC server (Ray's GCS) answers,
fails at once in the peer's words: ray.init would retry there for a quarter of an hour.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from lockguard.errors import EngineUnreachable
from lockguard.fleet.node_protocol import NodeOutput
from lockguard.io import run as runner
from lockguard.io.engines import ray_task, require

GRACE = 15.0  # seconds on top of --timeout for Ray to start a worker on each node
PROBE_SECONDS = 5.0
# an HTTP/2 client's first bytes (RFC 9113, 3.4): the connection preface and an empty SETTINGS
# frame; a gRPC server (Ray's GCS) answers with a SETTINGS frame of its own (type 4)
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS = 4
QUOTED = 80  # characters of a wrong peer's answer quoted


@dataclass(frozen=True)
class RayNode:
    node_id: str
    hostname: str
    address: str


def alive_nodes(ray) -> list[RayNode]:
    return [
        RayNode(
            n["NodeID"],
            n.get("NodeManagerHostname") or n.get("NodeManagerAddress") or n["NodeID"],
            n.get("NodeManagerAddress") or "",
        )
        for n in ray.nodes()
        if n.get("Alive")
    ]


def node_names(nodes: list[RayNode]) -> dict[str, str]:
    """node id -> the name in the report: the host name, or the node id for hosts that repeat."""
    repeated = Counter(n.hostname for n in nodes)
    return {n.node_id: n.hostname if repeated[n.hostname] == 1 else n.node_id for n in nodes}


def _probe(address: str) -> None:
    """A HOST:PORT that nothing answers on, or where no gRPC server answers, fails here at once
    in the peer's words (ray.init would retry for many minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # `auto`, or a ray:// client address: Ray's own look-up says what is wrong
    hint = "start one (`ray start --head`) or pass its GCS address: --address HOST:6379"
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_SECONDS) as conn:
            if os.environ.get("RAY_USE_TLS", "0") not in ("0", ""):
                return  # a TLS GCS answers no plain preface
            conn.sendall(H2_PREFACE)
            answer = _read(conn, 9)
            if len(answer) == 9 and answer[3] != SETTINGS:
                conn.settimeout(1.0)
                answer += _read(conn, QUOTED)  # enough of its answer to quote
    except OSError as exc:
        raise EngineUnreachable(
            f"no Ray cluster at --address {address}: {exc.strerror or exc}", hint=hint
        ) from exc
    if len(answer) == 9 and answer[3] == SETTINGS:
        return
    if not answer:
        said = "it closed the connection without a word"
    else:
        said = "it answered " + repr(" ".join(answer.decode("utf-8", "replace").split())[:QUOTED])
    raise EngineUnreachable(
        f"no Ray cluster at --address {address}: something listens there, but not Ray's GCS "
        f"(a gRPC server): {said}",
        hint=hint,
    )


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    try:
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                break
            data += chunk
    except TimeoutError:
        pass  # said less than a frame header in PROBE_SECONDS: judged on what came
    return data


def _ray_words(exc: BaseException) -> str:
    """Ray's message, without the traceback it sometimes pastes into it."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        return f"{lines[0]} ... {lines[-1]}"  # its last line says why
    return lines[0]


def run(
    script: str,
    *,
    address: str,
    timeout: float,
    files: Mapping[str, str],
    runtime_env: dict | None = None,
) -> list[NodeOutput]:
    ray = require("ray", "ray")
    # an optional engine (the ray extra), imported when used
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    owned = not ray.is_initialized()
    if owned:
        _probe(address)
        try:
            ray.init(
                address=address,
                logging_level=logging.ERROR,
                log_to_driver=False,
                include_dashboard=False,
                configure_logging=True,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise EngineUnreachable(
                f"no Ray cluster at --address {address}: {_ray_words(exc)}",
                hint="start one (`ray start --head`) or pass its address: --address HOST:6379",
            ) from exc
    try:
        ray.cloudpickle.register_pickle_by_value(runner)
        ray.cloudpickle.register_pickle_by_value(ray_task)
        task = ray.remote(ray_task.run_node_script)
        nodes = alive_nodes(ray)
        names = node_names(nodes)
        refs = {}
        for node in nodes:
            strategy = NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False)
            extra = {"runtime_env": runtime_env} if runtime_env else {}
            ref = task.options(
                scheduling_strategy=strategy,
                num_cpus=0,
                max_retries=0,
                name=f"lockguard-fleet:{names[node.node_id]}",
                **extra,
            ).remote(script, {"LOCKGUARD_NODE": names[node.node_id]}, timeout, files)
            refs[ref] = node
        ready, _pending = ray.wait(list(refs), num_returns=len(refs), timeout=timeout + GRACE)
        outputs = []
        for ref, node in refs.items():
            name = names[node.node_id]
            if ref not in ready:
                ray.cancel(ref, force=True)
                outputs.append(NodeOutput(name, "", timed_out=True))
                continue
            try:
                answer = ray.get(ref)
            except Exception as exc:  # the worker died, the node left the cluster: Ray's own words
                outputs.append(
                    NodeOutput(
                        name,
                        "",
                        problem=f"the Ray task failed: {type(exc).__name__}: {_ray_words(exc)}",
                    )
                )
                continue
            outputs.append(
                NodeOutput(
                    answer.get("own_name") or name,
                    answer["stdout"],
                    answer["stderr"],
                    answer["returncode"],
                    timed_out=answer["timed_out"],
                    problem=answer.get("problem"),
                )
            )
        return outputs
    finally:
        ray.cloudpickle.unregister_pickle_by_value(ray_task)
        ray.cloudpickle.unregister_pickle_by_value(runner)
        if owned:
            ray.shutdown()
