"""Benchmark `lockguard fleet` (DESIGN.md: fleet report over 10,000 node reports under 3 s; the
run fans out in parallel).

report: 10,000 synthetic node reports made from a real `lockguard doctor --json` record of this
machine (same size and keys), in 12 profiles (drivers, NCCL from LD_LIBRARY_PATH, another torch,
findings) plus 50 unreachable nodes; `fleet report DIR` timed in text, json and html, with peak
memory. run: `fleet run --via ray` on a local Ray cluster of N nodes against one `lockguard doctor
--json`, and `--via clush` (exec worker) on N hosts: a parallel fan-out costs about one doctor,
a sequential loop N of them.

    .venv/bin/python bench/fleet.py [--nodes 10000] [--ray-nodes 4] [--skip-run]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._measure import machine, run  # noqa: E402
from lockguard.doctor.record import fingerprint  # noqa: E402

LOCKGUARD = [sys.executable, "-m", "lockguard"]
REPO = Path(__file__).resolve().parents[1]


def template() -> dict:
    done = subprocess.run(
        [
            *LOCKGUARD,
            "doctor",
            "--json",
            "--intent",
            str(REPO / "examples/gpu-training/lockguard.toml"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "LOCKGUARD_NODE": "template"},
    )
    return json.loads(done.stdout)


def profiles() -> list[dict]:
    """Drift changes, each a kind of node seen in the field."""
    base = {
        "driver": "535.104.05",
        "gpu_models": ["8x NVIDIA H100 80GB HBM3"],
        "gpu_archs": ["sm_90"],
        "gpu_count": 8,
    }
    out = []
    for driver in ("535.104.05", "535.129.03", "550.54.15"):
        out.append({**base, "driver": driver})
    out.append(
        {
            **base,
            "nccl": "2.19.3",
            "nccl_origin": "system",
            "nccl_how": "reachable",
            "nccl_from": "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
            "findings": ["LG302 warning"],
        }
    )
    out.append(
        {
            **base,
            "torch": "2.1.2+cu118",
            "torch_local": "cu118",
            "torch_cuda": "11.8",
            "findings": ["LG310 error"],
        }
    )
    out.append({**base, "gpu_models": ["8x NVIDIA A100-SXM4-80GB"], "gpu_archs": ["sm_80"]})
    out.append({**base, "dev_shm_bytes": 64 << 20, "findings": ["LG307 warning"]})
    out.append(
        {
            **base,
            "usr_local_cuda": "/usr/local/cuda-11.8",
            "usr_local_cuda_version": "11.8.89",
            "findings": ["LG303 warning"],
        }
    )
    out.append(
        {
            **base,
            "nvcc": "12.4.131",
            "nvcc_path": "/usr/local/cuda-12.4/bin/nvcc",
            "findings": ["LG304 warning"],
        }
    )
    out.append(
        {
            **base,
            "cudnn": "8.9.7",
            "cudnn_origin": "system",
            "cudnn_how": "loaded",
            "findings": ["LG314 error"],
        }
    )
    out.append({**base, "driver": "525.85.12", "findings": ["LG300 error"]})
    out.append({**base, "python": "3.11.9"})
    return out


def make_reports(folder: Path, count: int, record: dict) -> int:
    random.seed(13)
    kinds = profiles()
    weights = [60, 10, 5, 4, 3, 3, 3, 3, 3, 2, 2, 2]
    data = record["data"]
    total = 0
    for index in range(count):
        node = f"gpu{index + 1:05d}"
        if index % 200 == 199:  # 50 nodes that did not answer
            body = {
                "fleet_node": 1,
                "node": node,
                "engine": "ray",
                "status": "unreachable",
                "message": "no answer within 300 s",
                "hint": None,
                "doctor": None,
                "check": None,
            }
        else:
            kind = random.choices(kinds, weights)[0]
            item = copy.deepcopy(record)
            drift = item["data"]["drift"]
            drift.update(kind)
            item["data"]["node"] = node
            item["data"]["fingerprint"] = fingerprint(drift, data["distributions"])
            item["data"]["findings"] = [
                {
                    "code": f.split()[0],
                    "severity": f.split()[1],
                    "message": f"{f} on {node}",
                    "hint": "see the doctor's fix",
                }
                for f in drift.get("findings") or []
            ]
            body = item
        text = json.dumps(body, indent=2, sort_keys=True)
        total += len(text)
        (folder / f"{node}.json").write_text(text)
    return total


def timed(label: str, argv: list[str]):
    """bench._measure.run plus the CPU seconds (user + sys) of the command and its children: the
    2-CPU VM is shared, so wall time alone can hide a busy neighbour."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(label, argv)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def bench_report(count: int) -> list[str]:
    folder = Path(tempfile.mkdtemp(prefix="lockguard-fleet-bench-"))
    try:
        size = make_reports(folder, count, template())
        lines = [
            f"### report: {count:,} node reports ({size / 1e6:.0f} MB of JSON, "
            f"{size // count:,} bytes each)",
            "",
            "| command | wall s (best of 3) | CPU s | peak MB | exit |",
            "|---|---|---|---|---|",
        ]
        for fmt in ("text", "json", "html"):
            out = folder.parent / f"{folder.name}.{fmt}"
            best = min(
                (
                    timed(
                        f"fleet report --format {fmt}",
                        [
                            *LOCKGUARD,
                            "fleet",
                            "report",
                            str(folder),
                            "--format",
                            fmt,
                            "--output",
                            str(out),
                        ],
                    )
                    for _ in range(3)
                ),
                key=lambda r: r.seconds,
            )
            lines.append(
                f"| `lockguard fleet report DIR --format {fmt}` | {best.seconds:.2f} | "
                f"{best.cpu:.2f} | {best.peak_mb:.0f} | {best.code} |"
            )
            out.unlink(missing_ok=True)
        return lines
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench_run(nodes: int) -> list[str]:
    """The fan-out: N nodes cost about one node when the engine runs them at once. On this 2-CPU VM
    the doctors themselves compete for the CPUs, so each engine also runs a node that first waits
    3 s (a cold `import torch` from a network filesystem): N of those take 3 s at once, 3N in a
    loop."""
    from ray.cluster_utils import Cluster

    lockguard = str(Path(sys.executable).parent / "lockguard")
    folder = Path(tempfile.mkdtemp(prefix="lockguard-fleet-run-"))
    waiting = folder / "lockguard-after-3s"
    waiting.write_text(f'#!/bin/sh\nsleep 3\nexec {lockguard} "$@"\n')
    waiting.chmod(0o755)
    start = time.perf_counter()
    subprocess.run(
        [*LOCKGUARD, "doctor", "--json"],
        capture_output=True,
        env={**os.environ, "LOCKGUARD_NODE": "x"},
    )
    one = time.perf_counter() - start
    lines = [
        f"### run: {nodes} nodes",
        "",
        f"One `lockguard doctor --json` here: {one:.2f} s; "
        f"a node that first waits 3 s: {one + 3:.2f} s.",
        "",
        "| command | s | a loop over the nodes would take | exit |",
        "|---|---|---|---|",
    ]

    def row(label: str, argv: list[str], per_node: float) -> None:
        result = run(label, [*argv, "--timeout", "300"])
        lines.append(f"| {label} | {result.seconds:.2f} | {per_node * nodes:.2f} | {result.code} |")

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray = [*LOCKGUARD, "fleet", "run", "--via", "ray", "--address", cluster.address]
        row(f"`fleet run --via ray` ({nodes} Ray nodes, workers start)", ray, one)
        row(f"`fleet run --via ray` ({nodes} Ray nodes, again)", ray, one)
        row(
            f"`fleet run --via ray` ({nodes} Ray nodes, each waits 3 s)",
            [*ray, "--lockguard", str(waiting)],
            one + 3,
        )
    finally:
        cluster.shutdown()
    clush = [
        *LOCKGUARD,
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        f"node[01-{nodes:02d}]",
        "--clush-worker",
        "exec",
    ]
    row(
        f"`fleet run --via clush --clush-worker exec` ({nodes} hosts)",
        [*clush, "--lockguard", lockguard],
        one,
    )
    row(
        f"`fleet run --via clush --clush-worker exec` ({nodes} hosts, each waits 3 s)",
        [*clush, "--lockguard", str(waiting)],
        one + 3,
    )
    shutil.rmtree(folder, ignore_errors=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--ray-nodes", type=int, default=4)
    parser.add_argument("--skip-run", action="store_true")
    args = parser.parse_args()
    print(f"## fleet (bench/fleet.py, {time.strftime('%Y-%m-%d')})\n\n{machine()}\n")
    print("\n".join(bench_report(args.nodes)) + "\n")
    if not args.skip_run:
        print("\n".join(bench_run(args.ray_nodes)) + "\n")


if __name__ == "__main__":
    main()
