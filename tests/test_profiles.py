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


def test_a_profile_whose_platform_forbids_the_shared_version_keeps_another_with_the_reason(
    mac_world, tmp_path, lg
):
    """fastmath 2.0 has a Linux wheel only: the Linux profiles lock 2.0, the mac profile cannot
    (no file for osx-arm64) and keeps 1.0, with the resolver's reason in its lock's header."""
    mac_world.pypi.add(build_wheel(mac_world.wheels / "fm1", "fastmath", "1.0", tag="py3-none-any"))
    mac_world.pypi.add(
        build_wheel(
            mac_world.wheels / "fm2", "fastmath", "2.0", tag="cp311-cp311-manylinux1_x86_64"
        )
    )
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project, pip=("fastmath",))
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    assert pins(project, "requirements.a100.lock")["fastmath"] == "2.0"
    assert pins(project, "requirements.mac.lock")["fastmath"] == "1.0"
    header = (project / "requirements.mac.lock").read_text().split("\n\n", 1)[0]
    assert "# lockguard-held-back: fastmath 1.0 (a100 locks 2.0): " in header
    assert "profile mac keeps fastmath 1.0 (a100 locks 2.0)" in result.stderr
    assert "lockguard-held-back" not in (project / "requirements.a100.lock").read_text()
    check = lg("check", "--intent", str(intent), "--no-cache")
    assert check.exit_code == 0, check.stdout
    again = lg("resolve", "--intent", str(intent), "--check")
    assert again.exit_code == 0, again.stdout + again.stderr


def test_editing_one_profile_leaves_the_others_byte_identical(mac_world, tmp_path, lg):
    mac_world.pypi.add(build_wheel(mac_world.wheels / "mlx", "mlx", "0.20.0", tag=MAC_TAG))
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    before = {p.name: p.read_bytes() for p in project.glob("requirements.*.lock")}
    intent.write_text(intent.read_text() + 'pip = ["mlx"]\n')  # into [profiles.mac], the last
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    assert pins(project, "requirements.mac.lock")["mlx"] == "0.20.0"
    for name in ("requirements.a100.lock", "requirements.v100.lock"):
        assert (project / name).read_bytes() == before[name]
    assert (project / "requirements.mac.lock").read_bytes() != before["requirements.mac.lock"]
    assert "a100 linux-64: unchanged" in result.stderr


def test_a_new_profile_takes_the_version_the_other_profiles_locked(mac_world, tmp_path, lg):
    """A relock keeps what it can: jinja2 4.0 is out since the lock was written; a profile added
    now would pick it alone, and takes the locked 3.x the others keep instead."""
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    locked = pins(project, "requirements.a100.lock")["jinja2"]
    mac_world.pypi.add(build_wheel(mac_world.wheels / "j4", "jinja2", "4.0.0"))
    intent.write_text(intent.read_text() + '\n[profiles.cpu]\ncuda = "none"\n')
    result = lg("resolve", "--intent", str(intent), "--refresh")
    assert result.exit_code == 0, result.stderr
    assert pins(project, "requirements.cpu.lock")["jinja2"] == locked
    assert pins(project, "requirements.a100.lock")["jinja2"] == locked
    assert "profile cpu: jinja2 " + locked in result.stderr


@pytest.fixture
def locked_profiles(mac_world, tmp_path, lg) -> Path:
    project = tmp_path / "p"
    intent = profiles_intent(mac_world, project)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    return intent


def test_clean_install_of_a_profile_for_another_platform_exits_2_naming_it(
    locked_profiles, venv, lg
):
    result = lg(
        "clean-install", "--intent", str(locked_profiles), "--prefix", str(venv),
        "--profile", "mac", "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--profile mac: this machine cannot run it (platform: this machine is linux-64, " \
        "the profile locks osx-arm64)" in result.stderr  # fmt: skip


@pytest.mark.parametrize(
    ("driver", "arch", "picked"),
    [("550.54.15", "sm_80", "a100"), ("520.61.05", "sm_70", "v100")],
)
def test_clean_install_without_profile_picks_the_one_that_fits_this_machine(
    locked_profiles, venv, lg, monkeypatch, driver, arch, picked
):
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", driver)
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", arch)
    result = lg(
        "clean-install", "--intent", str(locked_profiles), "--prefix", str(venv), "--dry-run",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.stderr
    assert f"requirements.{picked}.lock" in result.stdout


def test_clean_install_without_profile_on_a_machine_none_or_two_fit_exits_2(
    locked_profiles, venv, lg, monkeypatch
):
    args = ("clean-install", "--intent", str(locked_profiles), "--prefix", str(venv), "--dry-run")
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "450.80.02")  # below CUDA 11.8's floor
    none = lg(*args)
    assert none.exit_code == 2
    assert "no profile of" in none.stderr and "fits this machine" in none.stderr
    assert "a100: driver: this machine's 450.80.02 is below CUDA 12.1's floor" in none.stderr
    assert "mac: platform: this machine is linux-64" in none.stderr
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "550.54.15")  # no GPU named: both CUDA ones fit
    two = lg(*args)
    assert two.exit_code == 2
    assert (
        "more than one profile" in two.stderr and "pass --profile NAME (a100, v100)" in two.stderr
    )


def test_doctor_says_which_profiles_this_machine_runs_and_why_not_the_others(
    locked_profiles, lg, monkeypatch
):
    import json

    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "535.104.05")
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_80")
    result = lg("doctor", "--intent", str(locked_profiles), "--format", "json")
    checks = {c["title"]: c for c in json.loads(result.stdout)["data"]["checks"]}
    assert checks["profile a100"]["status"] == "ok"
    assert checks["profile v100"]["status"] == "skip"
    assert "sm_80 is not in the profile's gpu list (sm_70)" in checks["profile v100"]["message"]
    assert "platform: this machine is linux-64" in checks["profile mac"]["message"]
    assert json.loads(result.stdout)["data"]["lock"]["file"] == "requirements.a100.lock"


def test_commands_on_one_lock_take_profile_and_without_it_name_the_profiles(locked_profiles, lg):
    explained = lg("explain", "jinja2", "--intent", str(locked_profiles), "--profile", "v100")
    assert explained.exit_code == 0, explained.stderr
    assert "linux-64" in explained.stdout
    unnamed = lg("explain", "jinja2", "--intent", str(locked_profiles))
    assert unnamed.exit_code == 2
    assert "has profiles (a100, v100, mac): say which one with --profile NAME" in unnamed.stderr
    exported = lg("export", "--intent", str(locked_profiles), "--profile", "mac")
    assert exported.exit_code == 0, exported.stderr
    assert '"name": "torch"' in exported.stdout
    typo = lg("explain", "jinja2", "--intent", str(locked_profiles), "--profile", "v10")
    assert typo.exit_code == 2 and "did you mean --profile v100?" in typo.stderr


def test_fleet_groups_nodes_by_the_profile_they_fit_and_lists_those_that_fit_none(
    locked_profiles, lg, monkeypatch, tmp_path
):
    import json

    reports = tmp_path / "reports"
    reports.mkdir()
    nodes = {
        "a100-1": ("535.104.05", "sm_80"),
        "a100-2": ("535.104.05", "sm_80"),
        "v100-1": ("520.61.05", "sm_70"),
        "old-1": ("450.80.02", "sm_70"),  # below every CUDA profile's floor
    }
    for node, (driver, arch) in nodes.items():
        monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", driver)
        monkeypatch.setenv("LOCKGUARD_GPU_ARCH", arch)
        monkeypatch.setenv("LOCKGUARD_NODE", node)
        found = lg("doctor", "--intent", str(locked_profiles), "--format", "json")
        (reports / f"{node}.json").write_text(found.stdout)
    merged = lg("fleet", "report", str(reports), "--intent", str(locked_profiles), "--json")
    groups = json.loads(merged.stdout)["data"]["groups"]
    by_profile = {g["profile"]: sorted(g["nodes"]) for g in groups}
    assert by_profile["a100"] == ["a100-1", "a100-2"]
    assert by_profile["v100"] == ["v100-1"]
    assert by_profile[None] == ["old-1"]
    unfit = next(g for g in groups if g["profile"] is None)
    assert unfit["status"] != "matches"
    assert any("no profile of" in reason for reason in unfit["reasons"])


def test_the_pre_commit_hooks_run_when_any_profile_file_changes():
    import re

    import yaml

    hooks = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text()
    )
    changed = [
        "requirements.h100.lock",
        "requirements.h100.linux-64.lock",
        "environment.t4.yml",
        "conda-lock.t4.yml",
        "pylock.mac.toml",
        "services/train/conda-lock.h100.yml",
    ]
    for hook in hooks:
        for path in changed:
            assert re.search(hook["files"], path), (hook["id"], path)


def test_init_writes_a_profile_into_a_new_or_existing_intent(tmp_path, monkeypatch, lg):
    from lockguard.io.project.intent_file import load_project

    monkeypatch.chdir(tmp_path)
    assert lg("init", "--profile", "h100", "--cuda", "12.4", "torch==2.5.*").exit_code == 0
    assert lg("init", "--profile", "mac", "mlx").exit_code == 0
    project = load_project(tmp_path / "lockguard.toml", validate=False)
    h100, mac = project.profiles
    assert (h100.profile, str(h100.cuda), h100.pip) == ("h100", "12.4", ("torch==2.5.*",))
    assert (mac.profile, str(mac.cuda), mac.pip) == ("mac", "none", ("mlx",))
    again = lg("init", "--profile", "mac", "numpy")
    assert again.exit_code == 2 and "already has [profiles.mac]" in again.stderr
    bad = lg("init", "--profile", "Mac", "numpy")
    assert bad.exit_code == 2 and "--profile 'Mac' is not a profile name" in bad.stderr


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[profiles.gpu]\ncuda = "12.1"\ncdua = "x"\n',
            "profiles.gpu.cdua: 'cdua' is not a valid key",
        ),
        (
            '[profiles.gpu]\ncuda = "12.1"\n[profiles.gpu.outputs]\nrequirements = "r.lock"\n',
            "profiles.gpu.outputs: a profile cannot set outputs",
        ),
        ('[profiles.GPU]\ncuda = "12.1"\n', "profiles.GPU: 'GPU' is not a profile name"),
        ('[profiles.gpu]\ncuda = "12.x"\n', "profiles.gpu.cuda: '12.x' is not a CUDA version"),
        ('[profiles.gpu]\ndriver = "1"\n', "profiles.gpu.cuda: is not set, here nor at the top"),
    ],
)
def test_a_bad_profile_is_exit_2_with_its_file_and_line(tmp_path, lg, table, message):
    intent = tmp_path / "lockguard.toml"
    intent.write_text(f'python = "3.11"\npip = ["jinja2"]\n\n{table}')
    result = lg("check", "--intent", str(intent), "--no-cache")
    assert result.exit_code == 2
    assert message in result.stderr
    lines = intent.read_text().splitlines()
    first = 1 + next(i for i, text in enumerate(lines) if "profiles." in text)
    assert any(f"lockguard.toml:{n}:" in result.stderr for n in range(first, len(lines) + 1))


LIVE_INTENT = """\
python = "3.11"
pip = ["torch==2.5.*", "transformers==4.46.*", "accelerate"]
conda-from-knowledge = true

[profiles.h100]
cuda = "12.4"
gpu = ["sm_90"]
driver = "550.54.15"

[profiles.mac]
platforms = ["osx-arm64"]
cuda = "none"
channels = []
"""


@pytest.mark.network
def test_live_h100_and_mac_profiles_share_torch_and_transformers(tmp_path, lg):
    """Issue 33's done-when on live PyPI: both profiles in one run, one torch and transformers
    version, check passes, a mac edit leaves the h100 files byte-identical."""
    intent = tmp_path / "lockguard.toml"
    intent.write_text(LIVE_INTENT)
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    h100, mac = pins(tmp_path, "requirements.h100.lock"), pins(tmp_path, "requirements.mac.lock")
    assert h100["torch"] == mac["torch"] and h100["torch"].startswith("2.5.")
    assert h100["transformers"] == mac["transformers"]
    assert lg("check", "--intent", str(intent), "--no-cache").exit_code == 0
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.h100.*")}
    intent.write_text(LIVE_INTENT + 'pip = ["mlx"]\n')
    assert lg("resolve", "--intent", str(intent)).exit_code == 0
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.h100.*")} == before
    assert "mlx" in pins(tmp_path, "requirements.mac.lock")


def test_check_env_picks_the_profile_as_clean_install_does(locked_profiles, venv, lg, monkeypatch):
    named = lg("check", "--intent", str(locked_profiles), "--env", str(venv), "--profile", "mac")
    assert named.exit_code == 2
    assert "check --env --profile mac: this machine cannot run it (platform" in named.stderr
    monkeypatch.setenv("LOCKGUARD_CUDA_DRIVER", "520.61.05")
    monkeypatch.setenv("LOCKGUARD_GPU_ARCH", "sm_70")
    picked = lg("check", "--intent", str(locked_profiles), "--env", str(venv), "--format", "json")
    assert picked.exit_code == 1  # the empty venv lacks the lock's packages
    assert "(profile v100)" in picked.stdout
