"""`fleet run --via kubectl`: apply the one-shot DaemonSet of lockguard.fleet.k8s, wait until the
doctor container of every pod has ended (or --timeout), read each pod's log, delete what was
applied. Nodes that match the selector but whose pod gave no report are listed as unreachable."""

from __future__ import annotations

import json
import subprocess
import time

import yaml

from lockguard.errors import EngineUnreachable, InputError
from lockguard.fleet.k8s import (
    CONTAINER,
    RUN_LABEL,
    ManifestOptions,
    PodState,
    manifests,
    node_names,
    pod_states,
)
from lockguard.fleet.node_protocol import NodeOutput
from lockguard.io.engines import require_program

HINT = (
    "install kubectl and point it at the cluster (KUBECONFIG), or apply "
    "`lockguard fleet manifest` yourself"
)
POLL = 2.0


def _kubectl(
    kubectl: str, *args: str, stdin: str | None = None, namespace: str | None = None
) -> str:
    argv = [kubectl, *(["--namespace", namespace] if namespace else []), *args]
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise EngineUnreachable(
            f"kubectl {' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}",
            hint="check `kubectl get nodes` works with this KUBECONFIG and namespace",
        )
    return done.stdout


def run(script: str, *, options: ManifestOptions, timeout: float) -> list[NodeOutput]:
    kubectl = require_program("kubectl", "kubectl", HINT)
    namespace = options.namespace
    selector = ",".join(f"{k}={v}" for k, v in sorted(options.node_selector.items()))
    expected = node_names(
        json.loads(
            _kubectl(kubectl, "get", "nodes", *(["-l", selector] if selector else []), "-o", "json")
        )
    )
    if not expected:
        raise InputError(
            f"no Kubernetes node matches {selector or 'the node selector'}",
            key="--node-selector",
            hint="`kubectl get nodes --show-labels` lists the labels to select on",
        )
    documents = yaml.safe_dump_all(manifests(options, script), sort_keys=False)
    _kubectl(kubectl, "apply", "-f", "-", stdin=documents, namespace=namespace)
    try:
        deadline = time.monotonic() + timeout
        states: list[PodState] = []
        while True:
            pods = json.loads(
                _kubectl(
                    kubectl,
                    "get",
                    "pods",
                    "-l",
                    f"{RUN_LABEL}={options.run_id}",
                    "-o",
                    "json",
                    namespace=namespace,
                )
            )
            states = pod_states(pods)
            answered = {s.node for s in states if s.finished}
            if expected and set(expected) <= answered or time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        outputs, seen = [], set()
        for state in states:
            seen.add(state.node)
            if not state.finished:
                outputs.append(
                    NodeOutput(state.node or state.pod, "", timed_out=True, problem=state.reason)
                )
                continue
            log = subprocess.run(
                [
                    kubectl,
                    *(["--namespace", namespace] if namespace else []),
                    "logs",
                    state.pod,
                    "-c",
                    CONTAINER,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            outputs.append(
                NodeOutput(state.node or state.pod, log.stdout, log.stderr, state.exit_code)
            )
        for node in expected:
            if node not in seen:
                outputs.append(
                    NodeOutput(
                        node,
                        "",
                        problem="no lockguard pod was scheduled on this node "
                        "(cordoned, tainted or not ready?)",
                    )
                )
        return outputs
    finally:
        subprocess.run(
            [
                kubectl,
                *(["--namespace", namespace] if namespace else []),
                "delete",
                "-f",
                "-",
                "--wait=false",
                "--ignore-not-found",
            ],
            input=documents,
            capture_output=True,
            text=True,
            timeout=120,
        )
