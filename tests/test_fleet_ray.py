"""`lockguard fleet run --via ray` on a real local multi-node Ray cluster (issue 13, tests): one
task per alive node, pinned to it, one report per node named by the node id (the nodes share this
machine's host name), and the node whose raylet was started with LD_LIBRARY_PATH pointing at a
foreign libnccl.so.2 deviates and is named. Runs when Ray is installed (the test extra)."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from tests.support.fleet_nodes import EXAMPLE, cuda_toolkit, healthy_venv
from tests.support.native_libs import fake_nccl

pytestmark = pytest.mark.ray
INTENT = str(EXAMPLE / "lockguard.toml")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    root = tmp_path_factory.mktemp("fleet-ray")
    venv = healthy_venv(root / "venv")
    toolkit = cuda_toolkit(root / "cuda-12.1")
    nccl = fake_nccl(root / "system-nccl", 21903)
    if nccl is None:
        pytest.skip("no C compiler for the foreign libnccl.so.2")
    healthy = {"CUDA_HOME": str(toolkit), "LD_LIBRARY_PATH": "", "CUDA_PATH": ""}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "env_vars": healthy},
    )
    try:
        # the second node names itself (issue 25: the engine's name must not override a node's own)
        second = cluster.add_node(num_cpus=1, env_vars={**healthy, "LOCKGUARD_NODE": "gpu-b"})
        foreign = cluster.add_node(
            num_cpus=1, env_vars={**healthy, "LD_LIBRARY_PATH": str(nccl.parent)}
        )
        cluster.wait_for_nodes()
        assert second.node_id  # started
        nodes = {"head": cluster.head_node.node_id, "second": "gpu-b", "foreign": foreign.node_id}
        yield cluster.address, nodes, venv, nccl
    finally:
        cluster.shutdown()


def test_fleet_run_via_ray_returns_one_report_per_node_and_names_the_deviating_one(
    cluster, lg_process, tmp_path
):
    address, nodes, venv, _nccl = cluster
    out = tmp_path / "out"
    result = lg_process(
        "fleet",
        "run",
        "--via",
        "ray",
        "--address",
        address,
        "--python",
        str(venv / "bin" / "python"),
        "--intent",
        INTENT,
        "--out",
        str(out),
        "--format",
        "json",
        "--timeout",
        "90",
        "--strict",
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.exit_code == 1, result.output
    assert sorted(p.stem for p in out.iterdir()) == sorted(nodes.values())
    for node_id in nodes.values():
        record = json.loads((out / f"{node_id}.json").read_text())
        assert record["status"] == "ok" and record["engine"] == "ray", record
        assert (
            record["doctor"]["node"] == node_id
            and record["doctor"]["node_source"] == "LOCKGUARD_NODE"
        )
    data = json.loads(result.stdout)["data"]
    assert data["nodes"] == 3 and data["deviating"] == [nodes["foreign"]]
    healthy, deviating = data["groups"]
    assert (
        sorted(healthy["nodes"]) == sorted([nodes["head"], nodes["second"]])
        and healthy["status"] == "matches"
    )
    assert deviating["nodes"] == [nodes["foreign"]] and deviating["facts"]["nccl"] == "2.19.3"
    assert deviating["facts"]["nccl_origin"] == "system" and healthy["facts"]["nccl"] is None
    assert [f["code"] for f in deviating["findings"]] == ["LG302"]
    assert {c["key"] for c in data["columns"] if c["differs"]} == {"nccl", "findings"}


def test_the_runtime_env_reaches_every_task(cluster, lg_process):
    """--ray-runtime-env is passed to the tasks as given (here env_vars: every node now finds the
    foreign NCCL; the same path carries {"pip": ["lockguard"]})."""
    address, nodes, venv, nccl = cluster
    runtime_env = json.dumps({"env_vars": {"LD_LIBRARY_PATH": str(nccl.parent)}})
    result = lg_process(
        "fleet",
        "run",
        "--via",
        "ray",
        "--address",
        address,
        "--python",
        str(venv / "bin" / "python"),
        "--intent",
        INTENT,
        "--ray-runtime-env",
        runtime_env,
        "--format",
        "json",
        "--timeout",
        "90",
        "--strict",
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)["data"]
    (group,) = data["groups"]
    assert sorted(group["nodes"]) == sorted(nodes.values()) and group["facts"]["nccl"] == "2.19.3"
    bad = lg_process(
        "fleet", "run", "--via", "ray", "--address", address, "--ray-runtime-env", "{pip"
    )
    assert bad.exit_code == 2 and "--ray-runtime-env is not JSON" in bad.stderr


def test_no_ray_cluster_at_the_address_is_exit_4(lg_process):
    pytest.importorskip("ray")
    result = lg_process(
        "fleet", "run", "--via", "ray", "--address", "127.0.0.1:1", "--timeout", "5"
    )
    assert result.exit_code == 4, result.output
    assert (
        "no Ray cluster at --address 127.0.0.1:1" in result.stderr
        and "Traceback" not in result.stderr
    )


def test_an_address_where_no_ray_gcs_answers_is_exit_4_at_once_in_the_peer_s_words(
    lg_process, tmp_path
):
    """Something else listens there (a web server): ray.init would retry for about a quarter of
    an hour; lockguard asks the way a gRPC client does and quotes what came back."""
    pytest.importorskip("ray")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{server.server_address[1]}"
    try:
        started = time.monotonic()
        result = lg_process(
            "fleet", "run", "--via", "ray", "--address", address, "--timeout", "5", cwd=tmp_path
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 4, result.output
    assert time.monotonic() - started < 60
    assert (
        f"no Ray cluster at --address {address}: something listens there, but not Ray's GCS"
        in result.stderr
    )
    # http.server's answer to "PRI * HTTP/2.0": its error page (HTTP/0.9 style, no status line);
    # Python 3.10 opens it with an HTML 4.01 doctype, 3.11+ with a bare one
    assert "it answered '<!DOCTYPE HTML" in result.stderr and "Traceback" not in result.stderr
