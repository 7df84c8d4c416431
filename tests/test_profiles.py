"""One project, every kind of machine the team runs (issue 33): `[profiles.NAME]` tables lock
each kind of machine into its own files, one version of a shared package wherever the profiles'
facts allow it. Real wheels on the local PyPI and PyTorch indexes of tests/support/world.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.releases import pins
from tests.support.wheels import build_wheel

MAC_TAG = "cp311-none-macosx_11_0_arm64"


def profiles_intent(world, project: Path, extra: str = "", pip: tuple[str, ...] = ()) -> Path:
    """torch 2.1 and jinja2 on three kinds of machine: A100 nodes (CUDA 12.1, PyPI's torch), V100
    nodes whose driver stops at CUDA 11.8 (the PyTorch index's +cu118 build) and Apple laptops."""
    world.intent(project, cuda="12.1", pip=["torch==2.1.*", "jinja2", *pip])
    text = (project / "lockguard.toml").read_text().replace('cuda = "12.1"\n', "")
    text += (
        "\n[profiles.a100]\n"
        'cuda = "12.1"\n'
        'gpu = ["sm_80"]\n'
        "\n[profiles.v100]\n"
        'cuda = "11.8"\n'
        'gpu = ["sm_70"]\n'
        'driver = "520.61.05"\n'
        "\n[profiles.mac]\n"
        'platforms = ["osx-arm64"]\n'
        'cuda = "none"\n' + extra
    )
    (project / "lockguard.toml").write_text(text)
    return project / "lockguard.toml"


@pytest.fixture
def mac_world(world):
    """The world with torch 2.1.2's macOS arm64 wheel (PyPI serves one, CPU only)."""
    world.pypi.add(
        build_wheel(
            world.wheels / "mac",
            "torch",
            "2.1.2",
            tag=MAC_TAG,
            requires=["filelock", "typing-extensions", "sympy", "networkx", "jinja2", "fsspec"],
        )
    )
    return world


def test_three_profiles_lock_in_one_run_with_one_torch_version(mac_world, tmp_path, lg):
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in project.iterdir() if p.name != "lockguard.toml")
    assert names == ["requirements.a100.lock", "requirements.mac.lock", "requirements.v100.lock"]
    a100, v100, mac = (pins(project, f"requirements.{n}.lock") for n in ("a100", "v100", "mac"))
    assert a100["torch"] == "2.1.2" and v100["torch"] == "2.1.2+cu118" and mac["torch"] == "2.1.2"
    assert "nvidia-nccl-cu12" in a100 and "nvidia-nccl-cu12" not in mac
    assert a100["jinja2"] == v100["jinja2"] == mac["jinja2"]


def test_check_passes_after_resolve_and_flags_a_hand_edited_profile_lock(mac_world, tmp_path, lg):
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    ok = lg("check", "--intent", str(intent), "--no-cache")
    assert ok.exit_code == 0, ok.stdout + ok.stderr
    lock = project / "requirements.v100.lock"
    old = pins(project, "requirements.v100.lock")["jinja2"]
    lock.write_text(lock.read_text().replace(f"jinja2=={old}", "jinja2==3.0.0"))
    bad = lg("check", "--intent", str(intent), "--no-cache", "--format", "json")
    assert bad.exit_code == 1
    assert "profile v100:" in bad.stdout and "LG102" in bad.stdout


def test_a_shared_package_at_two_versions_without_a_reason_is_LG113(mac_world, tmp_path, lg):
    from lockguard.lockfiles.headers import seal
    from lockguard.lockfiles.requirements_lock import pin_entries

    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    lock = project / "requirements.mac.lock"
    old = pins(project, "requirements.mac.lock")["jinja2"]
    text = lock.read_text().replace(f"jinja2=={old}", "jinja2==3.0.0")
    lock.write_text(seal(text, pin_entries(text)))  # a re-sealed edit: the header agrees
    found = lg("check", "--intent", str(intent), "--no-cache")
    assert found.exit_code == 1
    assert "LG113" in found.stdout and "jinja2 differs between the profiles" in found.stdout


def test_a_project_without_profiles_keeps_its_intent_hash():
    """The bundled example's lock was written before profiles existed: its intent hash (in every
    lock file's header) is still what the intent parses to."""
    from lockguard.io.project.intent_file import load_project
    from lockguard.lockfiles.headers import read_header

    example = Path(__file__).resolve().parents[1] / "examples" / "gpu-training"
    intent = load_project(example / "lockguard.toml", validate=False)
    header = read_header((example / "requirements.lock").read_text())
    assert header.intent_hash == intent.hash
    assert "lockguard-profile" not in (example / "requirements.lock").read_text()
