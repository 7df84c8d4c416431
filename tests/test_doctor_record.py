"""The per-node JSON record of `lockguard doctor --json` (issue 11, point 4): the keys the README
documents, the node name, a fingerprint that groups identical nodes and separates different ones,
and drift columns a fleet report can print without deriving anything."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lockguard.doctor.record import DOCTOR_SCHEMA, FINGERPRINT_KEYS
from lockguard.lockfiles.headers import read_header
from tests.support.envs import copy_venv, make_venv, site_packages
from tests.support.fake_torch import add_dist, install_fake_torch

REPO = Path(__file__).resolve().parents[1]
TORCH = {
    "version": "2.1.2+cu121",
    "cuda": "12.1",
    "cudnn": 8902,
    "cuda_available": False,
    "arch_list": ["sm_80"],
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("record-venvs") / "template")


@pytest.fixture
def venv(template, tmp_path) -> Path:
    return copy_venv(template, tmp_path / "env")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch, tmp_path):
    for key in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "LOCKGUARD_NODE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def record(lg, *args) -> dict:
    result = lg("doctor", *args, "--json")
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "doctor" and envelope["exit_code"] == result.exit_code
    return envelope["data"]


def _readme_section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("### The doctor's JSON record")
    return text[start : text.index("\n## ", start)]


def test_the_record_has_the_documented_keys(venv, lg, monkeypatch):
    monkeypatch.setenv("LOCKGUARD_NODE", "gpu-node-17")
    install_fake_torch(site_packages(venv), dict(TORCH))
    body = record(lg, "--python", str(venv / "bin" / "python"))
    assert body["doctor_schema"] == DOCTOR_SCHEMA == 1
    assert (body["node"], body["node_source"]) == ("gpu-node-17", "LOCKGUARD_NODE")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["time"])
    assert body["python"] == str(venv / "bin" / "python") and body["lockguard"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", body["fingerprint"])
    assert body["fingerprint_keys"] == [*FINGERPRINT_KEYS, "distributions"]
    assert "torch==2.1.2+cu121" in body["distributions"] and body["distributions"] == sorted(
        body["distributions"]
    )
    assert body["drift"]["torch"] == "2.1.2+cu121" and body["drift"]["torch_local"] == "cu121"
    assert body["drift"]["torch_state"] == "ok" and body["drift"]["torch_cuda"] == "12.1"
    for item in body["checks"]:
        assert set(item) == {"code", "title", "status", "severity", "message", "hint", "evidence"}
        # doctor's own codes, and LG206 (installed twice), which check --env reports alike
        assert item["status"] in ("ok", "warn", "error", "skip") and re.fullmatch(
            r"LG3\d\d|LG206", item["code"]
        )
    assert set(body["facts"]) == {
        "nvml",
        "system",
        "environment",
        "torch",
        "imports",
        "smoke",
        "probe",
    }
    assert body["facts"]["system"]["gcc"] and "toolkits" in body["facts"]["system"]


def test_the_readme_documents_every_key():
    section = _readme_section()
    body_keys = [
        "doctor_schema",
        "node",
        "node_source",
        "time",
        "lockguard",
        "python",
        "exit_code",
        "fingerprint",
        "fingerprint_keys",
        "drift",
        "facts",
        "lock",
        "lock_reason",
        "distributions",
        "checks",
        "findings",
    ]
    for key in body_keys:
        assert f"`{key}`" in section, key
    starred = set(re.findall(r"`([a-z_]+)`\*", section))
    assert starred == set(FINGERPRINT_KEYS), starred ^ set(FINGERPRINT_KEYS)


def test_every_drift_key_is_documented(venv, lg):
    section = _readme_section()
    drift = record(lg, "--python", str(venv / "bin" / "python"))["drift"]
    undocumented = [key for key in drift if f"`{key}`" not in section]
    assert not undocumented


def test_the_fingerprint_groups_alike_nodes_and_separates_others(venv, lg, monkeypatch):
    install_fake_torch(site_packages(venv), dict(TORCH))
    monkeypatch.setenv("LOCKGUARD_NODE", "node-a")
    first = record(lg, "--python", str(venv / "bin" / "python"))
    monkeypatch.setenv("LOCKGUARD_NODE", "node-b")
    second = record(lg, "--python", str(venv / "bin" / "python"))
    assert first["node"] != second["node"] and first["fingerprint"] == second["fingerprint"]
    add_dist(site_packages(venv), "nvidia-nccl-cu12", "2.18.1")
    third = record(lg, "--python", str(venv / "bin" / "python"))
    assert third["fingerprint"] != first["fingerprint"]
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_80")
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "535.104.05")
    fourth = record(lg, "--python", str(venv / "bin" / "python"))
    assert fourth["fingerprint"] != third["fingerprint"]
    assert fourth["drift"]["driver"] == "535.104.05" and fourth["drift"]["gpu_archs"] == ["sm_80"]
    assert (
        fourth["drift"]["gpu_models"] == ["1x sm_80 (LOCKGUARD_GPU_ARCH)"]
        and fourth["drift"]["gpu_count"] == 1
    )


def test_the_lock_body_hash_and_findings_are_drift_columns(venv, lg, tmp_path):
    project = Path(shutil.copytree(REPO / "examples" / "gpu-training", tmp_path / "project"))
    install_fake_torch(site_packages(venv), dict(TORCH))
    body = record(
        lg, "--python", str(venv / "bin" / "python"), "--intent", str(project / "lockguard.toml")
    )
    declared = read_header((project / "requirements.lock").read_text()).body_hash
    assert body["drift"]["lock_body_hash"] == f"sha256:{declared}" == body["lock"]["body_hash"]
    assert body["lock"]["file"] == "requirements.lock" and body["lock_reason"] is None
    assert "LG310 error" in body["drift"]["findings"] and body["drift"]["errors"] >= 1
    without = record(lg, "--python", str(venv / "bin" / "python"))
    assert without["lock"] is None and "no lockguard.toml here" in without["lock_reason"]
    assert without["fingerprint"] != body["fingerprint"]
