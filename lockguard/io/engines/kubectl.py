"""`fleet run --via kubectl`: apply the one-shot DaemonSet of lockguard.fleet.k8s, wait until the
doctor container of every pod has ended (or --timeout), read each pod's log, delete what was
applied. Nodes that match the selector but whose pod gave no report are listed as unreachable.
kubectl's own words are quoted: a request the API server refuses (a namespace that does not
exist) is exit 2, a server that cannot be reached or used is exit 4."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from lockguard.errors import InputError
from lockguard.fleet.k8s import (
    CONTAINER,
    RUN_LABEL,
    ManifestOptions,
    PodState,
    manifests,
    name_of,
    node_names,
    pod_states,
)
from lockguard.fleet.launch import kubectl_refused, kubectl_words
from lockguard.fleet.node_protocol import NodeOutput
from lockguard.io.engines import EngineDown, EngineRefused, require_program
from lockguard.io.run import Finished, run_bounded
from lockguard.lockfiles.yaml_adapter import dump_all

HINT = (
    "install kubectl and point it at the cluster (KUBECONFIG), or apply "
    "`lockguard fleet manifest` yourself"
)
POLL = 2.0
CALL_TIMEOUT = 120.0  # one kubectl call


def _call(
    kubectl: str, *args: str, stdin: str | None = None, namespace: str | None = None
) -> Finished:
    argv = [kubectl, *(["--namespace", namespace] if namespace else []), *args]
    return run_bounded(argv, timeout=CALL_TIMEOUT, what=f"kubectl {args[0]}", stdin=stdin)


def _kubectl(
    kubectl: str, *args: str, stdin: str | None = None, namespace: str | None = None
) -> str:
    done = _call(kubectl, *args, stdin=stdin, namespace=namespace)
    if done.ok:
        return done.stdout
    what = f"kubectl {' '.join(args[:2])}"
    if done.returncode is None or done.timed_out:
        raise EngineDown(f"{what} failed: {done.problem}", said=[], hint=HINT)
    said = kubectl_words(done.stderr, done.stdout)
    if kubectl_refused(said):
        raise EngineRefused(
            f"{what} was refused: {said[0]}",
            said=said[1:],
            key="--namespace" if "namespace" in said[0] else None,
            hint="check --namespace, --node-selector and --image "
            "(`kubectl get namespaces`, `kubectl get nodes --show-labels`)",
        )
    raise EngineDown(
        f"{what} failed: {said[-1]}",
        said=said[:-1],
        hint="check that `kubectl get nodes` works with this KUBECONFIG and namespace",
    )


def run(
    script: str,
    *,
    options: ManifestOptions,
    timeout: float,
    say: Callable[[str], None] = lambda _message: None,
) -> list[NodeOutput]:
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
    documents = dump_all(manifests(options, script), width=80)
    _kubectl(kubectl, "apply", "-f", "-", stdin=documents, namespace=namespace)
    try:
        states = _wait(kubectl, options, expected, timeout)
        return _outputs(kubectl, namespace, states, expected)
    finally:
        done = _call(
            kubectl,
            "delete",
            "-f",
            "-",
            "--wait=false",
            "--ignore-not-found",
            stdin=documents,
            namespace=namespace,
        )
        if not done.ok:
            words = done.problem or " | ".join(kubectl_words(done.stderr, done.stdout))
            say(
                f"warning: kubectl delete failed: {words}; delete what fleet run applied "
                f"yourself: kubectl delete {options.kind},configmap {name_of(options)} "
                "--ignore-not-found" + (f" --namespace {namespace}" if namespace else "")
            )


def _wait(
    kubectl: str, options: ManifestOptions, expected: list[str], timeout: float
) -> list[PodState]:
    """The pods' states once every expected node's doctor ended, or at --timeout."""
    deadline = time.monotonic() + timeout
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
                namespace=options.namespace,
            )
        )
        states = pod_states(pods)
        answered = {s.node for s in states if s.finished}
        if expected and set(expected) <= answered or time.monotonic() >= deadline:
            return states
        time.sleep(POLL)


def _outputs(
    kubectl: str, namespace: str | None, states: list[PodState], expected: list[str]
) -> list[NodeOutput]:
    outputs, seen = [], set()
    for state in states:
        seen.add(state.node)
        if not state.finished:
            outputs.append(
                NodeOutput(state.node or state.pod, "", timed_out=True, problem=state.reason)
            )
            continue
        log = _call(kubectl, "logs", state.pod, "-c", CONTAINER, namespace=namespace)
        problem = None
        if not log.ok:  # the pod's report cannot be read: kubectl's words are that node's problem
            words = log.problem or " | ".join(kubectl_words(log.stderr))
            problem = f"kubectl logs {state.pod} failed: {words}"
        outputs.append(
            NodeOutput(
                state.node or state.pod,
                log.stdout if log.ok else "",
                log.stderr,
                state.exit_code,
                problem=problem,
            )
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
