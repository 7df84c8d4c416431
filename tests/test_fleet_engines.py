"""`lockguard fleet run` through the engines (issue 13, point 1): ClusterShell for real with its
exec worker (no SSH), the node script's protocol, a node without lockguard and a node that does
not answer; Slurm's srun command line and labelled output, the Kubernetes manifests and pod
states (built by pure functions); srun, kubectl and a missing extra are exit 2 saying so."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from lockguard.fleet.k8s import ManifestOptions, manifests, node_names, pod_states
from lockguard.fleet.launch import SlurmOptions, remote_command, split_labelled, srun_command
from lockguard.fleet.node_protocol import (
    MARK,
    NodeOutput,
    NodeRequest,
    node_script,
    parse_node_output,
)
from tests.support.fleet_nodes import EXAMPLE, cuda_toolkit, healthy_venv
from tests.support.native_libs import script

LOCKGUARD = str(Path(sys.executable).parent / "lockguard")
INTENT = str(EXAMPLE / "lockguard.toml")


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet-engines")
    return healthy_venv(root / "venv"), cuda_toolkit(root / "cuda-12.1")


@pytest.fixture
def node_env(monkeypatch, healthy):
    monkeypatch.setenv("CUDA_HOME", str(healthy[1]))
    for key in ("CUDA_PATH", "LD_LIBRARY_PATH", "LOCKGUARD_NODE"):
        monkeypatch.delenv(key, raising=False)
    return healthy[0]


# -- ClusterShell, for real (exec worker: the command runs here once per host) ---------------------


def test_clush_runs_doctor_on_every_host_and_keeps_one_file_per_node(lg, node_env, tmp_path):
    pytest.importorskip("ClusterShell")
    out = tmp_path / "out"
    result = lg(
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        "gpu[01-03]",
        "--clush-worker",
        "exec",
        "--lockguard",
        LOCKGUARD,
        "--python",
        str(node_env / "bin" / "python"),
        "--intent",
        INTENT,
        "--out",
        str(out),
        "--format",
        "json",
        "--timeout",
        "120",
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["gpu01.json", "gpu02.json", "gpu03.json"]
    assert f"wrote 3 node reports to {out}" in result.stderr
    record = json.loads((out / "gpu02.json").read_text())
    assert record["fleet_node"] == 1 and record["status"] == "ok" and record["engine"] == "clush"
    assert (
        record["doctor"]["node"] == "gpu02" and record["doctor"]["node_source"] == "LOCKGUARD_NODE"
    )
    data = json.loads(result.stdout)["data"]
    assert [g["nodeset"] for g in data["groups"]] == ["gpu[01-03]"] and data["deviating"] == []
    # the files are what `fleet report` reads
    again = lg("fleet", "report", str(out), "--intent", INTENT)
    assert again.exit_code == 0 and "3 nodes in 1 group; 3 match the lock" in again.stdout


def test_check_env_runs_on_every_node_and_its_findings_join_the_report(lg, node_env, tmp_path):
    pytest.importorskip("ClusterShell")
    out = tmp_path / "out"
    result = lg(
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        "gpu[01-02]",
        "--clush-worker",
        "exec",
        "--lockguard",
        LOCKGUARD,
        "--env",
        str(node_env),
        "--intent",
        INTENT,
        "--out",
        str(out),
        "--format",
        "json",
        "--timeout",
        "120",
    )
    record = json.loads((out / "gpu01.json").read_text())
    assert record["doctor"]["python"] == str(node_env / "bin" / "python")
    check = record["check"]
    # the fake torch's files are in no RECORD: check --env says so (LG212), doctor cannot
    lg212 = [f for f in check["findings"] if f["code"] == "LG212"]
    assert (
        lg212 and "site-packages/torch belongs to no installed distribution" in lg212[0]["message"]
    )
    assert result.exit_code == 1
    (group,) = json.loads(result.stdout)["data"]["groups"]
    assert group["nodeset"] == "gpu[01-02]" and group["status"] == "deviates"
    assert "LG212 error" in group["row"]["findings"]
    assert any(f["code"] == "LG212" for f in group["findings"])


def test_a_node_without_lockguard_fails_with_a_message_for_that_node(lg, node_env, tmp_path):
    pytest.importorskip("ClusterShell")
    result = lg(
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        "gpu[01-02]",
        "--clush-worker",
        "exec",
        "--lockguard",
        str(tmp_path / "nowhere" / "lockguard"),
        "--timeout",
        "60",
    )
    assert result.exit_code == 1
    assert "gpu[01-02]" in result.stdout
    assert (
        f"lockguard is not installed on this node: {tmp_path / 'nowhere' / 'lockguard'} not found"
        in result.stdout
    )
    assert "pip install lockguard" in result.stdout and "deviating: gpu[01-02]" in result.stdout


def test_a_node_that_does_not_answer_in_time_is_listed_as_unreachable(lg, node_env, tmp_path):
    pytest.importorskip("ClusterShell")
    slow = script(tmp_path / "bin" / "lockguard", "sleep 30\n")
    result = lg(
        "fleet",
        "run",
        "--via",
        "clush",
        "--hosts",
        "gpu01,gpu02",
        "--clush-worker",
        "exec",
        "--lockguard",
        str(slow),
        "--timeout",
        "2",
        "--format",
        "json",
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)["data"]
    assert data["deviating"] == ["gpu01", "gpu02"]
    (group,) = data["groups"]
    assert group["kind"] == "unreachable" and "within 2 s" in group["reasons"][0]


def test_a_bad_node_set_is_exit_2(lg):
    pytest.importorskip("ClusterShell")
    result = lg("fleet", "run", "--via", "clush", "--hosts", "gpu[01-")
    assert result.exit_code == 2 and "--hosts 'gpu[01-' is not a node set" in result.stderr


# -- the node script and its output ----------------------------------------------------------------


def test_the_node_script_runs_doctor_then_check_between_markers():
    text = node_script(NodeRequest(intent="/shared/p/lockguard.toml", env="/opt/env"))
    assert "%" not in text
    doctor = next(line for line in text.splitlines() if " doctor --json" in line)
    assert doctor == (
        '"$@" doctor --json --python /opt/env/bin/python '
        "--intent /shared/p/lockguard.toml </dev/null"
    )
    assert (
        '"$@" check --env /opt/env --format json --no-cache '
        "--intent /shared/p/lockguard.toml </dev/null"
    ) in text
    other = node_script(NodeRequest(python="/opt/env/bin/python3"))
    assert '"$@" doctor --json --python /opt/env/bin/python3 </dev/null' in other
    assert " check " not in other and " check " not in node_script(NodeRequest())
    assert 'node="${LOCKGUARD_NODE:-${SLURMD_NODENAME:-$(hostname)}}"' in text


def test_garbage_from_a_node_is_a_failed_node_not_a_crash():
    output = NodeOutput(
        "gpu04",
        f"{MARK} node gpu04\n{MARK} doctor\nSegmentation fault\n{MARK} end 139\n",
        "core dumped",
    )
    record = parse_node_output(output, engine="clush", timeout=60)
    assert (
        record["status"] == "failed"
        and "exit 139" in record["message"]
        and "core dumped" in record["message"]
    )
    error = json.dumps(
        {
            "schema": 1,
            "command": "doctor",
            "ok": False,
            "exit_code": 2,
            "error": {"kind": "bad-input", "message": "no intent found in /home/u"},
        }
    )
    record = parse_node_output(
        NodeOutput("gpu04", f"{MARK} doctor\n{error}\n{MARK} end 2\n"), engine="ray", timeout=60
    )
    assert record["status"] == "failed" and "no intent found in /home/u" in record["message"]


def test_a_check_that_fails_on_a_node_is_an_lg402_finding_next_to_its_doctor_report():
    doctor = json.dumps(
        {"schema": 1, "command": "doctor", "ok": True, "exit_code": 0, "data": {"node": "gpu04"}}
    )
    check = json.dumps(
        {
            "schema": 1,
            "command": "check",
            "ok": False,
            "exit_code": 2,
            "error": {"kind": "bad-input", "message": "/opt/env is not an environment"},
        }
    )
    stdout = f"{MARK} doctor\n{doctor}\n{MARK} end 0\n{MARK} check\n{check}\n{MARK} end 2\n"
    record = parse_node_output(NodeOutput("gpu04", stdout), engine="clush", timeout=60)
    assert record["status"] == "ok" and record["doctor"] == {"node": "gpu04"}
    (finding,) = record["check"]["findings"]
    assert finding["code"] == "LG402" and "/opt/env is not an environment" in finding["message"]
    cut = f"{MARK} doctor\n{doctor}\n{MARK} end 0\n{MARK} check\n"
    record = parse_node_output(NodeOutput("gpu04", cut, timed_out=True), engine="clush", timeout=60)
    assert "check --env did not finish within 60 s" in record["check"]["findings"][0]["message"]


def test_ssh_failures_are_unreachable_with_ssh_s_words():
    output = NodeOutput(
        "gpu09",
        "",
        "ssh: connect to host gpu09 port 22: No route to host",
        255,
        problem="ssh failed: ssh: connect to host gpu09 port 22: No route to host",
    )
    record = parse_node_output(output, engine="clush", timeout=60)
    assert record["status"] == "unreachable" and "No route to host" in record["message"]


# -- Slurm: srun's command line and its labelled output --------------------------------------------


def test_srun_command_line_passes_the_options_through():
    argv = srun_command(
        SlurmOptions(
            nodes=16,
            partition="gpu",
            nodelist="gpu[01-16]",
            extra=("--account=ml", "--time=00:10:00"),
        ),
        "SCRIPT",
    )
    assert argv == [
        "srun",
        "--nodes=16",
        "--ntasks-per-node=1",
        "--label",
        "--kill-on-bad-exit=0",
        "--job-name=lockguard-fleet",
        "--partition=gpu",
        "--nodelist=gpu[01-16]",
        "--account=ml",
        "--time=00:10:00",
        "sh",
        "-c",
        "SCRIPT",
    ]
    with pytest.raises(ValueError):
        srun_command(SlurmOptions(), "SCRIPT")


def test_srun_labelled_output_is_split_per_task_and_named_by_slurmd_nodename():
    envelope = json.dumps(
        {"schema": 1, "command": "doctor", "ok": True, "exit_code": 0, "data": {"node": "x"}},
        indent=2,
    ).splitlines()
    stdout = [f" 0: {MARK} node gpu07", f" 1: {MARK} node gpu08", f" 0: {MARK} doctor"]
    stdout += [f" 0: {line}" for line in envelope] + [
        " 0: ",
        f" 0: {MARK} end 0",
        f" 1: {MARK} doctor",
    ]
    outputs = split_labelled("\n".join(stdout) + "\n", " 1: slow\n", timed_out=True, tasks=3)
    records = [parse_node_output(o, engine="slurm", timeout=30) for o in outputs]
    assert [r["node"] for r in records] == ["gpu07", "gpu08", "slurm-task-2"]
    assert records[0]["status"] == "ok" and records[0]["doctor"] == {"node": "x"}
    assert (
        records[1]["status"] == "unreachable"
        and "doctor started but did not finish within 30 s" in records[1]["message"]
    )
    assert records[2]["status"] == "unreachable"


def test_clush_remote_command_runs_the_script_under_sh():
    assert remote_command("echo 'a b'") == "sh -c 'echo '\"'\"'a b'\"'\"''"


# -- Kubernetes: the manifests and the pods read back ----------------------------------------------


def test_the_daemonset_manifest_names_the_node_through_the_downward_api(lg, tmp_path):
    result = lg(
        "fleet",
        "manifest",
        "--image",
        "registry.example.com/train:1",
        "--intent",
        INTENT,
        "--namespace",
        "ml",
        "--node-selector",
        "gpu=h100",
        "--run-id",
        "abc",
    )
    assert result.exit_code == 0, result.output
    config, daemonset = list(yaml.safe_load_all(result.stdout))
    assert config["kind"] == "ConfigMap" and set(config["data"]) >= {
        "lockguard.toml",
        "requirements.lock",
    }
    assert config["data"]["requirements.lock"] == (EXAMPLE / "requirements.lock").read_text()
    assert daemonset["kind"] == "DaemonSet" and daemonset["metadata"]["namespace"] == "ml"
    spec = daemonset["spec"]["template"]["spec"]
    (doctor,) = spec["initContainers"]
    env = {e["name"]: e for e in doctor["env"]}
    assert env["LOCKGUARD_NODE"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    assert (
        doctor["command"][:2] == ["sh", "-c"]
        and "--intent /lockguard/project/lockguard.toml" in doctor["command"][2]
    )
    assert (
        spec["nodeSelector"] == {"gpu": "h100"}
        and spec["volumes"][0]["configMap"]["name"] == "lockguard-fleet-abc"
    )
    assert daemonset["spec"]["selector"]["matchLabels"]["lockguard.dev/fleet-run"] == "abc"


def test_the_job_manifest_spreads_one_pod_per_node():
    (job,) = manifests(ManifestOptions(image="img", kind="job", nodes=4, gpus=1), "SCRIPT")
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["completionMode"]) == (4, 4, "Indexed")
    pod = spec["template"]["spec"]
    term = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname" and pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}


def test_pod_states_say_which_nodes_answered():
    pods = {
        "items": [
            {
                "metadata": {"name": "p1"},
                "spec": {"nodeName": "gpu01"},
                "status": {
                    "phase": "Running",
                    "initContainerStatuses": [
                        {
                            "name": "doctor",
                            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                        }
                    ],
                },
            },
            {
                "metadata": {"name": "p2"},
                "spec": {"nodeName": "gpu02"},
                "status": {
                    "phase": "Pending",
                    "initContainerStatuses": [
                        {"name": "doctor", "state": {"waiting": {"reason": "ImagePullBackOff"}}}
                    ],
                },
            },
            {
                "metadata": {"name": "p3"},
                "spec": {},
                "status": {
                    "phase": "Pending",
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": "0/8 nodes",
                        }
                    ],
                },
            },
        ]
    }
    states = pod_states(pods)
    assert [(s.node, s.finished, s.exit_code) for s in states] == [
        ("gpu01", True, 0),
        ("gpu02", False, None),
        (None, False, None),
    ]
    assert (
        states[1].reason == "pod ImagePullBackOff"
        and states[2].reason == "pod Unschedulable: 0/8 nodes"
    )
    assert node_names({"items": [{"metadata": {"name": "b"}}, {"metadata": {"name": "a"}}]}) == [
        "a",
        "b",
    ]


# -- what is missing here is exit 2, saying so -----------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "args", "program"),
    [
        ("slurm", ["--nodes", "2"], "srun"),
        ("kubectl", ["--image", "img"], "kubectl"),
    ],
)
def test_srun_and_kubectl_absent_are_exit_2(lg, monkeypatch, tmp_path, engine, args, program):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = lg("fleet", "run", "--via", engine, *args)
    assert result.exit_code == 2
    assert f"--via {engine} runs {program}, and there is no {program} on PATH" in result.stderr


@pytest.mark.parametrize(
    ("engine", "module", "args"), [("ray", "ray", []), ("clush", "ClusterShell", ["--hosts", "a1"])]
)
def test_a_missing_extra_is_exit_2_naming_it(lg, monkeypatch, engine, module, args):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as when it is not installed
    result = lg("fleet", "run", "--via", engine, *args)
    assert result.exit_code == 2
    assert (
        f"pip install 'lockguard[{engine}]'" in result.stderr and "Traceback" not in result.output
    )


def test_slurm_needs_a_node_count(lg, monkeypatch, tmp_path):
    script(tmp_path / "srun", "exit 0\n")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    result = lg("fleet", "run", "--via", "slurm")
    assert result.exit_code == 2 and "--nodes N or --nodelist" in result.stderr


# -- Slurm end to end with a stand-in srun (this machine has no Slurm) -----------------------------

FAKE_SRUN = r"""
# stands in for srun --nodes=N --label ... sh -c SCRIPT: N tasks at once, SLURMD_NODENAME set,
# every line of each task labelled "K: " as srun --label does
n=1
while [ $# -gt 0 ]; do
  case "$1" in --nodes=*) n="${1#--nodes=}";; sh) break;; esac
  shift
done
script="$3"
i=0
while [ "$i" -lt "$n" ]; do
  (SLURMD_NODENAME="cn$((i + 1))" sh -c "$script" 2>&1 | sed -u "s/^/$i: /") &
  i=$((i + 1))
done
wait
"""


def test_slurm_runs_one_task_per_node_named_by_slurmd_nodename(lg, node_env, monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    script(bin_dir / "srun", FAKE_SRUN)
    # cn2's lockguard hangs: it is listed as unreachable, the others still answer
    script(
        bin_dir / "lockguard",
        f'[ "$SLURMD_NODENAME" = cn2 ] && exec sleep 60\nexec {LOCKGUARD} "$@"\n',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    result = lg(
        "fleet",
        "run",
        "--via",
        "slurm",
        "--nodes",
        "3",
        "--partition",
        "gpu",
        "--lockguard",
        str(bin_dir / "lockguard"),
        "--python",
        str(node_env / "bin" / "python"),
        "--intent",
        INTENT,
        "--out",
        str(out),
        "--timeout",
        "15",
        "--format",
        "json",
    )
    data = json.loads(result.stdout)["data"]
    assert result.exit_code == 1, result.output
    assert sorted(p.name for p in out.iterdir()) == ["cn1.json", "cn2.json", "cn3.json"]
    assert json.loads((out / "cn3.json").read_text())["doctor"]["node"] == "cn3"
    healthy, unreachable = data["groups"]
    assert healthy["nodeset"] == "cn[1,3]" and healthy["status"] == "matches"
    assert unreachable["nodeset"] == "cn2" and unreachable["kind"] == "unreachable"
    assert data["deviating"] == ["cn2"]
