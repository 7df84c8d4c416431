"""The engines tell their own words (issue 35): stand-ins for srun, ssh (ClusterShell's ssh worker
runs it) and kubectl on PATH print the real tools' real lines, and `lockguard fleet run` (a child
process) quotes them: a request the engine refuses is exit 2, an engine that cannot be reached or
cannot run the job is exit 4, a job waiting in Slurm's queue is said at once.

srun's lines are Slurm's own (22.05: src/slurmctld/job_mgr.c "invalid partition specified: %s",
src/common/slurm_errno.c for "Unable to allocate resources: ..." and the pending reasons,
src/api/allocate.c "job %u queued and waiting for resources"), printed with srun's log prefixes
("srun: " for info, "srun: error: " for errors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lockguard.fleet.launch import split_labelled
from lockguard.fleet.node_protocol import MARK, parse_node_output
from tests.support.fleet_nodes import EXAMPLE, cuda_toolkit, healthy_venv
from tests.support.native_libs import script

LOCKGUARD = str(Path(sys.executable).parent / "lockguard")
INTENT = str(EXAMPLE / "lockguard.toml")


def _path(bin_dir: Path) -> dict:
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


# -- Slurm -----------------------------------------------------------------------------------------

# runs the tasks as srun --label would, once "granted" (see test_fleet_engines.FAKE_SRUN)
# waits like srun in the queue, for at most two minutes (no stray process if a test fails)
QUEUE = "i=0; while [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done\n"
RUN_TASKS = r"""
n=1
for a; do case "$a" in --nodes=*) n="${a#--nodes=}";; esac; done
while [ $# -gt 0 ] && [ "$1" != sh ]; do shift; done
i=0
while [ "$i" -lt "$n" ]; do
  (SLURMD_NODENAME="cn$((i + 1))" sh -c "$3" 2>&1 | sed -u "s/^/$i: /") &
  i=$((i + 1))
done
wait
"""


def test_an_invalid_partition_is_exit_2_in_srun_s_words(lg_process, tmp_path):
    script(
        tmp_path / "srun",
        "echo 'srun: error: invalid partition specified: nosuch' >&2\n"
        "echo 'srun: error: Unable to allocate resources: Invalid partition name specified' >&2\n"
        "exit 1\n",
    )
    result = lg_process(
        "fleet", "run", "--via", "slurm", "--nodes", "2", "--partition", "nosuch",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (
        "srun refused the job (exit 1): srun: error: invalid partition specified: nosuch"
        in result.stderr
    )
    assert "Unable to allocate resources: Invalid partition name specified" in result.stderr
    assert "unreachable" not in result.output and "Traceback" not in result.stderr


def test_a_job_slurm_cannot_start_is_stopped_at_once_exit_4(lg_process, tmp_path):
    """--nodes 2 on a one-node partition: slurmctld queues the job with its reason, srun says so
    and would wait for ever; lockguard stops it at once (SIGTERM: srun gives the job back)."""
    given_back = tmp_path / "given-back"
    script(
        tmp_path / "srun",
        f'trap \'echo "srun: Job allocation 12 has been revoked" >&2; touch {given_back}; '
        "exit 1' TERM\n"
        "echo 'srun: Requested partition configuration not available now' >&2\n"
        "echo 'srun: job 12 queued and waiting for resources' >&2\n" + QUEUE,
    )
    started = time.monotonic()
    result = lg_process(
        "fleet", "run", "--via", "slurm", "--nodes", "2", "--timeout", "300",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    assert time.monotonic() - started < 60
    assert "Slurm queued job 12 and cannot start it now" in result.stderr
    assert "srun: Requested partition configuration not available now" in result.stderr
    assert "srun: job 12 queued and waiting for resources" in result.stderr
    assert given_back.exists()  # SIGTERM, not SIGKILL: srun revoked the pending job
    assert "waiting for the nodes" not in result.stderr  # it is not waited for


def test_a_queued_job_is_said_at_once_and_waited_for(lg_process, node_env, tmp_path):
    script(
        tmp_path / "srun",
        "echo 'srun: job 13 queued and waiting for resources' >&2\n"
        "sleep 3\n"
        "echo 'srun: job 13 has been allocated resources' >&2\n" + RUN_TASKS,
    )
    result = lg_process(
        "fleet", "run", "--via", "slurm", "--nodes", "2", "--lockguard", LOCKGUARD,
        "--python", str(node_env / "bin" / "python"), "--intent", INTENT, "--timeout", "120",
        "--format", "json",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        "srun: job 13 queued and waiting for resources: waiting for the nodes up to --timeout "
        "(120 s, the queue counts)" in result.stderr
    )
    assert "srun: job 13 has been allocated resources" in result.stderr
    (group,) = json.loads(result.stdout)["data"]["groups"]
    assert group["nodeset"] == "cn[1-2]"


def test_a_job_still_queued_at_the_timeout_is_exit_4_said_while_it_waits(tmp_path):
    script(
        tmp_path / "srun",
        "echo 'srun: job 14 queued and waiting for resources' >&2\n" + QUEUE,
    )
    env = {**os.environ, **_path(tmp_path)}
    argv = [sys.executable, "-m", "lockguard", "fleet", "run", "--via", "slurm", "--nodes", "2"]
    started = time.monotonic()
    with subprocess.Popen(
        [*argv, "--timeout", "20"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stderr is not None
        heard = ""
        while "queued" not in heard and (line := child.stderr.readline()):
            heard = line
        heard_at = time.monotonic() - started
        rest = child.stderr.read()
        code = child.wait(timeout=120)
    assert "srun: job 14 queued and waiting for resources: waiting for the nodes" in heard
    assert heard_at < 15  # said at once, not at the --timeout
    assert code == 4
    assert "Slurm did not start job 14 within --timeout 20 s" in rest


def test_srun_that_cannot_reach_the_controller_is_exit_4(lg_process, tmp_path):
    script(
        tmp_path / "srun",
        "echo 'srun: error: Unable to allocate resources: Unable to contact slurm controller "
        "(connect failure)' >&2\nexit 1\n",
    )
    result = lg_process(
        "fleet", "run", "--via", "slurm", "--nodes", "2", env=_path(tmp_path), cwd=tmp_path
    )
    assert result.exit_code == 4, result.output
    assert "srun cannot reach the Slurm controller" in result.stderr
    assert "Unable to contact slurm controller (connect failure)" in result.stderr


def test_a_task_that_printed_nothing_carries_srun_s_error_lines():
    stdout = f"0: {MARK} node cn1\n"
    stderr = (
        "srun: error: Task launch for StepId=12.0 failed on node cn2: Invalid node name "
        "specified\nsrun: error: Application launch failed: Invalid node name specified\n"
    )
    outputs = split_labelled(stdout, stderr, timed_out=False, tasks=2)
    silent = parse_node_output(outputs[1], engine="slurm", timeout=60)
    assert silent["status"] == "unreachable" and silent["node"] == "slurm-task-1"
    assert "Task launch for StepId=12.0 failed on node cn2" in silent["message"]


# -- ClusterShell (its ssh worker runs `ssh` from PATH) ------------------------------------------


def test_no_host_resolves_is_exit_2_in_ssh_s_words(lg_process, tmp_path):
    pytest.importorskip("ClusterShell")
    script(
        tmp_path / "ssh",
        'for a; do case "$a" in -*) ;; *) host="$a"; break;; esac; done\n'
        'echo "ssh: Could not resolve hostname $host: Name or service not known" >&2\n'
        "exit 255\n",
    )
    result = lg_process(
        "fleet", "run", "--via", "clush", "--hosts", "gpu[01-02]", "--timeout", "30",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "no host of --hosts gpu[01-02] resolves" in result.stderr
    assert "ssh: Could not resolve hostname gpu01: Name or service not known" in result.stderr
    assert "ssh: Could not resolve hostname gpu02: Name or service not known" in result.stderr


def test_one_host_ssh_cannot_reach_is_unreachable_in_ssh_s_words(lg_process, node_env, tmp_path):
    pytest.importorskip("ClusterShell")
    script(
        tmp_path / "ssh",
        'while [ $# -gt 0 ]; do case "$1" in -*) shift;; *) break;; esac; done\n'
        'host="$1"; shift\n'
        'if [ "$host" = gpu02 ]; then\n'
        '  echo "ssh: connect to host gpu02 port 22: Connection refused" >&2\n'
        '  echo "lost connection" >&2; exit 255\n'
        "fi\n"
        'LOCKGUARD_NODE="$host" exec sh -c "$*"\n',
    )
    result = lg_process(
        "fleet", "run", "--via", "clush", "--hosts", "gpu[01-02]", "--lockguard", LOCKGUARD,
        "--python", str(node_env / "bin" / "python"), "--intent", INTENT, "--timeout", "120",
        "--format", "json",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    groups = {g["nodeset"]: g for g in json.loads(result.stdout)["data"]["groups"]}
    assert groups["gpu01"]["status"] == "matches"
    (reason,) = groups["gpu02"]["reasons"]
    assert "ssh: connect to host gpu02 port 22: Connection refused" in reason


def test_no_ssh_here_is_exit_2(lg_process, tmp_path):
    pytest.importorskip("ClusterShell")
    for tool in ("sh", "hostname"):
        (tmp_path / tool).symlink_to(
            next(p for p in ("/bin/" + tool, "/usr/bin/" + tool) if os.path.exists(p))
        )
    result = lg_process(
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        "gpu01",
        env={"PATH": str(tmp_path)},
        cwd=tmp_path,
    )
    assert result.exit_code == 2, result.output
    assert "--via clush runs ssh, and there is no ssh on PATH" in result.stderr


# -- kubectl ---------------------------------------------------------------------------------------

KLOG = (
    'E1202 02:24:26.580332   15166 memcache.go:265] "Unhandled Error" err="couldn\'t get '
    'current server API group list: Get \\"http://localhost:8080/api?timeout=32s\\": dial tcp '
    '127.0.0.1:8080: connect: connection refused"'
)


@pytest.mark.parametrize(
    "words",
    [
        [KLOG, KLOG, "The connection to the server localhost:8080 was refused - did you specify "
         "the right host or port?"],
        ['error: the server doesn\'t have a resource type "nodes"'],
    ],
)  # fmt: skip
def test_a_cluster_kubectl_cannot_use_is_exit_4_in_its_own_words(lg_process, tmp_path, words):
    body = "".join(f"echo {json.dumps(line)} >&2\n" for line in words)
    script(tmp_path / "kubectl", body.replace("`", "\\`") + "exit 1\n")
    result = lg_process(
        "fleet", "run", "--via", "kubectl", "--image", "img", env=_path(tmp_path), cwd=tmp_path
    )
    assert result.exit_code == 4, result.output
    assert f"kubectl get nodes failed: {words[-1]}" in result.stderr
    assert "memcache.go" not in result.stderr  # client-go's log lines are not kubectl's verdict


NS_MISSING = (
    'Error from server (NotFound): error when creating "STDIN": namespaces "nosuch" not found'
)
LOGS_REFUSED = (
    'Error from server (BadRequest): container "doctor" in pod "p1" is waiting to start: '
    "PodInitializing"
)
UNAUTHORIZED = "error: You must be logged in to the server (Unauthorized)"
FAKE_KUBECTL = f"""
case "$*" in
  *"get nodes"*) echo '{{"items": [{{"metadata": {{"name": "gpu01"}}}}]}}';;
  *apply*) cat >/dev/null
    if [ -n "$NS_MISSING" ]; then echo '{NS_MISSING}' >&2; exit 1; fi
    echo 'daemonset.apps/lockguard-fleet created';;
  *"get pods"*) echo '{{"items": [{{"metadata": {{"name": "p1"}}, "spec": {{"nodeName": "gpu01"}},
    "status": {{"initContainerStatuses": [{{"name": "doctor",
    "state": {{"terminated": {{"exitCode": 0}}}}}}]}}}}]}}';;
  *logs*) echo '{LOGS_REFUSED}' >&2; exit 1;;
  *delete*) cat >/dev/null; echo '{UNAUTHORIZED}' >&2; exit 1;;
esac
"""


def test_kubectl_refusing_the_namespace_is_exit_2(lg_process, tmp_path):
    script(tmp_path / "kubectl", FAKE_KUBECTL)
    result = lg_process(
        "fleet", "run", "--via", "kubectl", "--image", "img", "--namespace", "nosuch",
        env={**_path(tmp_path), "NS_MISSING": "1"}, cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (
        'kubectl apply -f was refused: Error from server (NotFound): error when creating "STDIN": '
        'namespaces "nosuch" not found' in result.stderr
    )


def test_kubectl_logs_and_delete_failures_are_said_in_kubectl_s_words(lg_process, tmp_path):
    script(tmp_path / "kubectl", FAKE_KUBECTL)
    result = lg_process(
        "fleet", "run", "--via", "kubectl", "--image", "img", "--format", "json",
        env=_path(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    (group,) = json.loads(result.stdout)["data"]["groups"]
    assert group["nodeset"] == "gpu01"
    assert "kubectl logs p1 failed: Error from server (BadRequest)" in group["reasons"][0]
    assert (
        "warning: kubectl delete failed: error: You must be logged in to the server "
        "(Unauthorized); delete what fleet run applied yourself: kubectl delete "
        "daemonset,configmap lockguard-fleet-" in result.stderr
    )


def test_kubectl_that_hangs_is_exit_4_not_a_traceback(lg, monkeypatch, tmp_path):
    from lockguard.io.engines import kubectl

    script(tmp_path / "kubectl", "exec sleep 60\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(kubectl, "CALL_TIMEOUT", 2.0)
    result = lg("fleet", "run", "--via", "kubectl", "--image", "img")
    assert result.exit_code == 4, result.output
    assert "kubectl get nodes failed: kubectl get did not finish within 2 s" in result.stderr


# -- the environment the nodes check ---------------------------------------------------------------


def test_without_env_or_python_fleet_run_says_what_doctor_probes(lg_process, tmp_path):
    pytest.importorskip("ClusterShell")
    nowhere = str(tmp_path / "nowhere" / "lockguard")
    args = ["fleet", "run", "--via", "clush", "--clush-worker", "exec", "--hosts", "gpu01"]
    bare = lg_process(*args, "--lockguard", nowhere, "--timeout", "30", cwd=tmp_path)
    assert bare.exit_code == 1, bare.output
    assert "note: no --env or --python: on each node doctor probes the Python lockguard runs" in (
        bare.stderr
    )
    named = lg_process(*args, "--lockguard", nowhere, "--python", "/bin/sh", cwd=tmp_path)
    assert "no --env or --python" not in named.stderr


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet-words")
    return healthy_venv(root / "venv"), cuda_toolkit(root / "cuda-12.1")


@pytest.fixture
def node_env(monkeypatch, healthy):
    monkeypatch.setenv("CUDA_HOME", str(healthy[1]))
    for key in ("CUDA_PATH", "LD_LIBRARY_PATH", "LOCKGUARD_NODE"):
        monkeypatch.delenv(key, raising=False)
    return healthy[0]
