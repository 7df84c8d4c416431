"""Kubernetes: the manifest that runs the node script once on every GPU node (a one-shot
DaemonSet, or an Indexed Job spread one pod per node), and the pods' state read back from
`kubectl get pods -o json`. The node's name comes from the pod's spec.nodeName through the downward
API (LOCKGUARD_NODE); the project's intent and lock travel in a ConfigMap. Pure: options and the
API's JSON in, manifests and pod states out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lockguard.model.json_types import JsonObject

APP_LABEL = "app.kubernetes.io/name"
RUN_LABEL = "lockguard.dev/fleet-run"
CONTAINER = "doctor"
PROJECT_MOUNT = "/lockguard/project"


@dataclass(frozen=True, kw_only=True)
class ManifestOptions:
    image: str
    run_id: str = "manual"
    namespace: str | None = None
    kind: str = "daemonset"  # daemonset | job
    nodes: int | None = None  # pods of the Job (one per node)
    node_selector: Mapping[str, str] = field(
        default_factory=lambda: {"nvidia.com/gpu.present": "true"}
    )
    gpus: int = 0  # nvidia.com/gpu per pod; 0: every GPU through NVIDIA_VISIBLE_DEVICES=all
    project_files: Mapping[str, str] = field(default_factory=dict)  # file name -> text (ConfigMap)


def name_of(options: ManifestOptions) -> str:
    return f"lockguard-fleet-{options.run_id}"


def manifests(options: ManifestOptions, script: str) -> list[JsonObject]:
    if options.kind not in ("daemonset", "job"):
        raise ValueError(f"kind {options.kind!r}: expected daemonset or job")
    if options.kind == "job" and not options.nodes:
        raise ValueError("a Job needs the number of nodes (--nodes N)")
    name = name_of(options)
    labels = {APP_LABEL: "lockguard-fleet", RUN_LABEL: options.run_id}
    meta = {
        "name": name,
        "labels": labels,
        **({"namespace": options.namespace} if options.namespace else {}),
    }
    out = []
    if options.project_files:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": meta,
                "data": dict(sorted(options.project_files.items())),
            }
        )
    pod = _pod_spec(options, script, labels)
    if options.kind == "daemonset":
        # the report comes from an init container; the pause container only keeps the pod from
        # restarting it (a DaemonSet's pods must restart Always), and the DaemonSet is deleted
        # once every pod's log is read
        pod["spec"]["initContainers"] = pod["spec"].pop("containers")
        pod["spec"]["containers"] = [
            {
                "name": "done",
                "image": options.image,
                "command": ["sh", "-c", "exec sleep 2147483647"],
                "resources": {"requests": {"cpu": "1m", "memory": "4Mi"}},
            }
        ]
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": meta,
                "spec": {"selector": {"matchLabels": labels}, "template": pod},
            }
        )
    else:
        pod["spec"]["restartPolicy"] = "Never"
        pod["spec"]["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": labels},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
        out.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": meta,
                "spec": {
                    "completions": options.nodes,
                    "parallelism": options.nodes,
                    "completionMode": "Indexed",
                    "backoffLimit": 0,
                    "ttlSecondsAfterFinished": 3600,
                    "template": pod,
                },
            }
        )
    return out


def _pod_spec(options: ManifestOptions, script: str, labels: JsonObject) -> JsonObject:
    env = [{"name": "LOCKGUARD_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    resources: JsonObject = {"requests": {"cpu": "100m", "memory": "256Mi"}}
    if options.gpus:
        resources["limits"] = {"nvidia.com/gpu": options.gpus}
    else:
        env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"})
    container = {
        "name": CONTAINER,
        "image": options.image,
        "command": ["sh", "-c", script],
        "env": env,
        "resources": resources,
    }
    spec: JsonObject = {
        "containers": [container],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    if options.node_selector:
        spec["nodeSelector"] = dict(options.node_selector)
    if options.project_files:
        container["volumeMounts"] = [
            {"name": "project", "mountPath": PROJECT_MOUNT, "readOnly": True}
        ]
        spec["volumes"] = [{"name": "project", "configMap": {"name": name_of(options)}}]
    return {"metadata": {"labels": labels}, "spec": spec}


@dataclass(frozen=True)
class PodState:
    pod: str
    node: str | None
    finished: bool  # the doctor container ran to its end
    exit_code: int | None
    reason: str  # what the pod is doing, for a node that gives no report


def pod_states(pods: JsonObject) -> list[PodState]:
    """`kubectl get pods -l ... -o json` -> the doctor container's state in each pod."""
    states = []
    for item in pods.get("items") or []:
        meta, spec, status = (
            item.get("metadata") or {},
            item.get("spec") or {},
            item.get("status") or {},
        )
        statuses = (status.get("initContainerStatuses") or []) + (
            status.get("containerStatuses") or []
        )
        # kubectl's JSON
        mine: dict[str, Any] = next((s for s in statuses if s.get("name") == CONTAINER), {})
        state = mine.get("state") or {}
        terminated = state.get("terminated")
        if terminated:
            states.append(
                PodState(
                    meta.get("name", "?"),
                    spec.get("nodeName"),
                    True,
                    terminated.get("exitCode"),
                    terminated.get("reason") or "Completed",
                )
            )
            continue
        waiting = (state.get("waiting") or {}).get("reason")
        conditions = [
            f"{c.get('reason')}: {c.get('message')}"
            for c in status.get("conditions") or []
            if c.get("status") == "False" and c.get("reason")
        ]
        reason = (
            waiting or (conditions[0] if conditions else None) or status.get("phase") or "unknown"
        )
        states.append(
            PodState(meta.get("name", "?"), spec.get("nodeName"), False, None, f"pod {reason}")
        )
    return states


def node_names(nodes: JsonObject) -> list[str]:
    """`kubectl get nodes -l SELECTOR -o json` -> the names of the nodes that should answer."""
    return sorted(
        item["metadata"]["name"]
        for item in nodes.get("items") or []
        if item.get("metadata", {}).get("name")
    )
