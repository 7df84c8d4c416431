"""A foreign libnccl on LD_LIBRARY_PATH has one severity, the registry's, in every command (issue
30): `check --env` (LG217), the clean-install plan (LG217) and doctor (LG302) all call it a warning,
even where torch loaded its wheel's copy; a fleet node with only that warning matches the lock.
Real venvs, a real gcc-compiled libnccl, child lockguard processes, the real probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockguard.fleet.records import fleet_node_record
from lockguard.model import codes
from tests.support.envs import site_packages
from tests.support.fake_torch import install_fake_torch
from tests.support.native_libs import fake_nccl

TORCH = {
    "version": "2.1.0",
    "cuda": "12.1",
    "cudnn": 8902,
    "cuda_available": False,
    "arch_list": ["sm_80"],
    "devices": [],
}


@pytest.fixture
def project(world, tmp_path) -> Path:
    return world.locked(
        tmp_path / "project", cuda="12.1", pip=["jinja2", "nvidia-nccl-cu12==2.18.1"]
    )


@pytest.fixture
def foreign(tmp_path, monkeypatch) -> dict[str, str]:
    """libnccl.so.2.19.3 (SONAME libnccl.so.2) and its libnccl.so.2 link in a folder of
    LD_LIBRARY_PATH: the lock's nvidia-nccl-cu12 is 2.18.1. The environment the children get."""
    lib = fake_nccl(tmp_path / "system-nccl", 21903, filename="libnccl.so.2.19.3")
    if lib is None:
        pytest.skip("no C compiler")
    (lib.parent / "libnccl.so.2").symlink_to(lib.name)
    for key in ("CUDA_HOME", "CUDA_PATH", "LOCKGUARD_NODE"):
        monkeypatch.delenv(key, raising=False)
    return {"LD_LIBRARY_PATH": str(lib.parent), "LOCKGUARD_NODE": "gpu01"}


def _json(result) -> dict:
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_one_severity_in_check_env_clean_install_doctor_and_fleet(
    world, project, venv, foreign, lg_process, tmp_path
):
    intent = ["--intent", str(project / "lockguard.toml")]
    applied = lg_process("clean-install", *intent, "--prefix", str(venv), "--yes")
    assert applied.exit_code == 0, applied.stderr
    registry = codes.LOADER_PATH_COPY.severity
    assert registry == codes.LIBRARY_OUTSIDE_WHEELS.severity == "warning"

    check = lg_process("check", *intent, "--env", str(venv), "--format", "json", env=foreign)
    check_body = _json(check)
    lg217 = [f for f in check_body["data"]["findings"] if f["code"] == "LG217"]
    assert lg217 and all(f["severity"] == registry for f in lg217), lg217
    assert "libnccl.so.2.19.3" in lg217[0]["message"] and "2.18.1" in lg217[0]["message"]
    # a warning about the machine: it fails the check only with --strict
    assert check.exit_code == 0 and not [
        f for f in check_body["data"]["findings"] if f["severity"] == "error"
    ], check.stdout
    strict = lg_process("check", *intent, "--env", str(venv), "--strict", env=foreign)
    assert strict.exit_code == 1 and "LG217 warning" in strict.stdout

    dry = lg_process("clean-install", *intent, "--prefix", str(venv), "--dry-run", env=foreign)
    assert dry.exit_code == 0, dry.stderr
    assert "    LG217 warning: " in dry.stdout and "nothing to change" in dry.stdout
    plan = _json(
        lg_process(
            "clean-install", *intent, "--prefix", str(venv), "--dry-run", "--json", env=foreign
        )
    )["data"]["plan"]
    assert [f["severity"] for f in plan["reported"] if f["code"] == "LG217"] == [registry]

    # torch, loading the wheel's own libnccl (the probe maps it), as a real torch would by RPATH
    wheel_nccl = fake_nccl(site_packages(venv) / "nvidia" / "nccl" / "lib", 21801)
    install_fake_torch(site_packages(venv), {**TORCH, "libs": [str(wheel_nccl)]})
    doctor = lg_process(
        "doctor", "--python", str(venv / "bin" / "python"), *intent, "--json", env=foreign
    )
    doctor_body = _json(doctor)["data"]
    lg302 = next(c for c in doctor_body["checks"] if c["code"] == "LG302")
    # torch mapped the wheel's copy: still the registry's warning, never "ok"
    assert lg302["status"] == "warn" and lg302["severity"] == registry, lg302
    assert (
        "libnccl.so.2" in lg302["message"]
        and "the lock's nvidia-nccl-cu12 is 2.18.1" in (lg302["message"])
    )
    assert doctor_body["drift"]["nccl_how"] == "loaded"

    # the fleet's table: a node whose only problem is that library matches the lock
    reports = tmp_path / "reports"
    reports.mkdir()
    node = fleet_node_record(
        "gpu01",
        engine="clush",
        status="ok",
        doctor=doctor_body,
        check={"exit_code": check.exit_code, **check_body["data"]},
    )
    (reports / "gpu01.json").write_text(json.dumps(node))
    fleet = lg_process("fleet", "report", str(reports), *intent, "--format", "json")
    fleet_body = _json(fleet)["data"]
    assert fleet.exit_code == 0 and fleet_body["deviating"] == [], fleet.stdout
    strict_fleet = lg_process("fleet", "report", str(reports), *intent, "--strict")
    assert strict_fleet.exit_code == 1 and "gpu01" in strict_fleet.stdout
