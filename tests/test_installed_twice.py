"""One distribution installed twice (issue 30).

LG206: `pip install --ignore-installed torch==2.1.0` over torch 1.13.1 leaves two .dist-info in one
folder whose RECORDs share paths. doctor, `check --env` and the clean-install plan say so (an
error); every version doctor reports is the one that imports; cuDNN is compared with the wheel of
torch's CUDA; the plan quarantines the extra copy's files instead of "upgrading". The fixture is
what real pip does with two versions of a tiny fake torch wheel, in a real venv.

LG213: a copy on another sys.path entry is named by where it comes from (the user site, a
PYTHONPATH entry, a .pth, a venv's base interpreter) with the fix that applies there; the base
interpreter's pip, setuptools and wheel are not drift.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lockguard.install.inventory import LockView, take_inventory
from lockguard.install.plan import make_plan
from lockguard.io.env.prefix_scan import scan_prefix
from tests.support.envs import PIP_ENV, make_venv, site_packages
from tests.support.fake_torch import fake_torch_wheel
from tests.support.index_server import LocalIndex
from tests.support.wheels import build_wheel

FAKE = {"cuda_available": False, "arch_list": ["sm_80"], "devices": []}
OLD = {**FAKE, "version": "1.13.1", "cuda": "11.7", "cudnn": 8500}
NEW = {**FAKE, "version": "2.1.0", "cuda": "12.1", "cudnn": 8902}  # cuDNN 8.9.2, cu12's wheel


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("twice-wheels")
    fake_torch_wheel(
        folder,
        OLD,
        requires=["nvidia-cudnn-cu11==8.5.0.96"],
        extra={"torch/_old_only.py": b"OLD = 1\n", "torch/lib/libtorch_old.so": b"\x7fELF old"},
    )
    fake_torch_wheel(folder, NEW, requires=["nvidia-cudnn-cu12==8.9.2.26"])
    for name, version in (("nvidia-cudnn-cu11", "8.5.0.96"), ("nvidia-cudnn-cu12", "8.9.2.26")):
        library = f"\x7fELF cudnn {version}".encode()
        build_wheel(
            folder,
            name,
            version,
            files={"nvidia/cudnn/__init__.py": b"", "nvidia/cudnn/lib/libcudnn.so.8": library},
        )
    for version in ("1.16.0", "1.15.0", "1.14.0"):
        build_wheel(folder, "six", version, files={"six.py": f"V = {version!r}\n".encode()})
    return folder


def pip(venv: Path, wheels: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index"]
        + ["--find-links", str(wheels), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **PIP_ENV},
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def twice(venv, wheels) -> Path:
    """torch 1.13.1, then `pip install --ignore-installed torch==2.1.0` (the common advice)."""
    pip(venv, wheels, "torch==1.13.1")
    pip(venv, wheels, "--ignore-installed", "torch==2.1.0")
    site = site_packages(venv)
    assert {p.name for p in site.glob("torch-*.dist-info")} == {
        "torch-1.13.1.dist-info",
        "torch-2.1.0.dist-info",
    }
    # pip wrote 2.1.0's files over 1.13.1's and left what only 1.13.1 had
    assert (site / "torch" / "_old_only.py").exists()
    assert json.loads((site / "torch" / "fake_config.json").read_text())["version"] == "2.1.0"
    return venv


@pytest.fixture
def project(wheels, tmp_path, lg) -> Path:
    """A pip-only lock of torch 2.1.0 (and its nvidia-cudnn-cu12), resolved against an index of
    the test's wheels."""
    index = LocalIndex(tmp_path / "index")
    for wheel in wheels.glob("*.whl"):
        index.add(wheel)
    index.start()
    try:
        folder = tmp_path / "project"
        folder.mkdir()
        (folder / "lockguard.toml").write_text(
            'python = "3.11"\ncuda = "12.1"\nchannels = []\nplatforms = ["linux-64"]\n'
            f'indexes = ["{index.url}"]\npip = ["torch==2.1.0"]\n'
        )
        assert lg("resolve", "--intent", str(folder / "lockguard.toml")).exit_code == 0
    finally:
        index.stop()
    return folder


def _body(result) -> dict:
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def _checks(body: dict) -> dict[str, dict]:
    return {c["title"]: c for c in body["data"]["checks"]}


# -- LG206 --------------------------------------------------------------------------------------


def test_doctor_names_the_copy_that_imports_and_says_it_is_installed_twice(
    twice, project, lg_process
):
    python = str(twice / "bin" / "python")
    result = lg_process("doctor", "--python", python, "--intent", str(project / "lockguard.toml"))
    body = _body(
        lg_process(
            "doctor", "--python", python, "--intent", str(project / "lockguard.toml"), "--json"
        )
    )
    checks = _checks(body)
    assert checks["import torch"]["status"] == "ok"
    assert checks["import torch"]["message"] == "torch 2.1.0"  # never 1.13.1: 2.1.0 imports
    twice_check = checks["installed twice"]
    assert twice_check["code"] == "LG206" and twice_check["status"] == "error"
    assert "torch is installed twice in " in twice_check["message"]
    assert "1.13.1 (torch-1.13.1.dist-info)" in twice_check["message"]
    assert "2.1.0 (torch-2.1.0.dist-info, what imports)" in twice_check["message"]
    assert "clean-install" in twice_check["hint"]
    # the lock's torch is what imports: LG310 agrees; cuDNN 8.9.2 is cu12's, not cu11's 8.5.0.96
    assert checks["lock"]["status"] == "ok"
    assert checks["cuDNN"]["status"] == "ok" and "nvidia-cudnn-cu12" in checks["cuDNN"]["message"]
    distributions = body["data"]["distributions"]
    assert "torch==2.1.0" in distributions and "torch==1.13.1" in distributions
    assert body["data"]["drift"]["torch"] == "2.1.0"
    assert result.exit_code == 1 and "error  installed twice" in result.stdout


def test_check_env_reports_it_once_and_the_plan_quarantines_the_extra_copy(
    twice, project, lg_process
):
    intent = ["--intent", str(project / "lockguard.toml")]
    check = lg_process("check", *intent, "--env", str(twice), "--format", "json")
    found = _body(check)["data"]["findings"]
    assert check.exit_code == 1
    lg206 = [f for f in found if f["code"] == "LG206"]
    assert len(lg206) == 1 and lg206[0]["severity"] == "error"
    assert "2.1.0 (torch-2.1.0.dist-info) is what imports" in lg206[0]["message"]
    assert "1.13.1 (torch-1.13.1.dist-info) is left over" in lg206[0]["message"]
    # the leftover dist-info is not "torch 1.13.1 installed, the lock has 2.1.0"
    assert not [f for f in found if f["code"] == "LG201" and "torch" in f["message"]], found

    dry = lg_process("clean-install", *intent, "--prefix", str(twice), "--dry-run", "--json")
    plan = _body(dry)["data"]["plan"]
    torch_out = [o for o in plan["outgoing"] if o["name"] == "torch"]
    assert [(o["version"], o["reason"]) for o in torch_out] == [
        ("1.13.1", "installed twice: 2.1.0 was installed over it")
    ]
    assert not any(pin.startswith("torch==") for pin in plan["install"])
    text = lg_process("clean-install", *intent, "--prefix", str(twice), "--dry-run").stdout
    assert "upgrade" not in text and "torch 1.13.1  (installed twice" in text

    site = site_packages(twice)
    applied = lg_process("clean-install", *intent, "--prefix", str(twice), "--yes")
    assert applied.exit_code == 0, applied.stderr
    assert [p.name for p in site.glob("torch-*.dist-info")] == ["torch-2.1.0.dist-info"]
    assert not (site / "torch" / "_old_only.py").exists()
    assert not (site / "torch" / "lib" / "libtorch_old.so").exists()
    assert (site / "torch" / "__init__.py").exists()  # 2.1.0's own files stay
    after = _body(lg_process("check", *intent, "--env", str(twice), "--format", "json"))
    assert not [f for f in after["data"]["findings"] if f["severity"] == "error"]


def test_a_lock_of_the_overwritten_version_takes_both_copies_out(twice):
    """The lock pins 1.13.1, whose dist-info lost its files to 2.1.0: nothing of either stays, and
    1.13.1 is installed afresh."""
    snap = scan_prefix(twice)
    copies = {d.version: d for d in snap.dists if d.name == "torch"}
    assert copies["2.1.0"].overwritten == ()
    assert copies["1.13.1"].overwritten  # the shared files carry 2.1.0's bytes
    lock = LockView(pip={"torch": "1.13.1", "nvidia-cudnn-cu11": "8.5.0.96"})
    inventory = take_inventory(snap, lock)
    plan = make_plan(inventory, snap, requirements="requirements.lock")
    reasons = {o.version: o.reason for o in plan.outgoing if o.name == "torch"}
    assert reasons == {
        "1.13.1": "installed twice: 2.1.0 was installed over it",
        "2.1.0": "downgrade to 1.13.1",
    }
    assert "torch==1.13.1" in plan.install
    moved = {item.path.split("site-packages/")[-1] for item in plan.moves()}
    assert {"torch/__init__.py", "torch/fake_config.json", "torch/_old_only.py"} <= moved


# -- LG213: where the other copy comes from ---------------------------------------------------


def _lg213(lg_process, project: Path, venv: Path, env: dict[str, str]) -> list[dict]:
    result = lg_process(
        "check",
        "--intent",
        str(project / "lockguard.toml"),
        "--env",
        str(venv),
        "--format",
        "json",
        env=env,
    )
    return [f for f in _body(result)["data"]["findings"] if f["code"] == "LG213"]


def test_a_pythonpath_copy_and_a_pth_copy_are_named_with_their_fix(
    venv, wheels, project, tmp_path, lg_process
):
    pip(venv, wheels, "six==1.16.0")
    on_path, injected = tmp_path / "pp", tmp_path / "injected"
    pip(venv, wheels, "--target", str(on_path), "six==1.15.0")
    pip(venv, wheels, "--target", str(injected), "six==1.14.0")
    pth = site_packages(venv) / "zz-extra.pth"
    pth.write_text(f"{injected}\n")
    found = _lg213(lg_process, project, venv, {"PYTHONPATH": str(on_path)})
    assert len(found) == 1, found
    message, hint = found[0]["message"], found[0]["hint"]
    assert f"1.15.0 in the PYTHONPATH entry {on_path} wins over 1.16.0 in the environment's" in (
        message
    )
    assert f"1.14.0 in {injected} (added by {pth})" in message
    assert f"unset PYTHONPATH, or remove {on_path} from it" in hint
    assert f"remove the line naming {injected} from {pth}" in hint
    assert "pip uninstall" not in hint and "user" not in hint


def test_the_base_interpreters_copy_is_named_and_its_installer_tools_are_not_drift(
    wheels, project, tmp_path, lg_process, monkeypatch
):
    for key, value in PIP_ENV.items():
        monkeypatch.setenv(key, value)
    venv = make_venv(tmp_path / "sys-env", system_site=True)
    base = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sys, sysconfig; base = {'base': sys.base_prefix, 'platbase': sys.base_prefix}"
            "; print(sysconfig.get_paths(vars=base)['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    base_tools = {p.name.split("-")[0].lower() for p in Path(base).glob("*.dist-info")} & {
        "pip",
        "setuptools",
        "wheel",
    }
    env_tools = {p.name.split("-")[0] for p in site_packages(venv).glob("*.dist-info")}
    if not base_tools & env_tools:
        pytest.skip("the base interpreter and its venvs share no installer tool here")
    # a distribution of the base's (not a tool) that the venv installs too, at another version
    others = sorted(
        p.name.split("-")[0]
        for p in Path(base).glob("*.dist-info")
        if p.name.split("-")[0].lower() not in ("pip", "setuptools", "wheel")
    )
    if others:
        name = others[0]
        build_wheel(tmp_path / "mine", name, "0.0.1", files={"lockguard_test_mine.py": b""})
        pip(venv, tmp_path / "mine", "--no-deps", f"{name}==0.0.1")
    found = _lg213(lg_process, project, venv, {})
    named = {f["message"].split(" ", 1)[0] for f in found}
    assert not named & {"pip", "setuptools", "wheel"}, found
    if not others:
        return  # the base holds nothing else to shadow here
    mine = next(f for f in found if " 0.0.1 in the environment's" in f["message"])
    assert f"in the base interpreter's {os.path.realpath(base)}" in mine["message"]
    assert "include-system-site-packages = true" in mine["hint"]
    assert "pip uninstall" not in mine["hint"]
