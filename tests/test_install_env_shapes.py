"""The installs people really have (issue 32): a site-packages on another file system than the
quarantine (refused by the preflight, the dry run says why), as real child processes on real
venvs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from lockguard.io.env.preflight import survey_moves
from tests.support.envs import PIP_ENV, make_venv, pip_install, site_packages, tree_hashes
from tests.support.wheels import build_wheel

OTHER_FS = Path("/dev/shm")


def other_file_system(here: Path) -> bool:
    return OTHER_FS.is_dir() and os.stat(OTHER_FS).st_dev != os.stat(here).st_dev


@pytest.fixture
def project(world, tmp_path) -> Path:
    return world.locked(tmp_path / "project", cuda="12.1", pip=["oldlib"])


def lockguard(project: Path, venv: Path, *args: str):
    command, rest = args[0], args[1:]
    where = ["--env", str(venv)] if command == "check" else ["--prefix", str(venv)]
    intent = [] if command == "restore" else ["--intent", str(project / "lockguard.toml")]
    return subprocess.run(
        [sys.executable, "-m", "lockguard", command, *intent, *where, *rest],
        env={**os.environ, **PIP_ENV},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def split_venv(world, venv, tmp_path):
    """The venv's site-packages is a tmpfs mounted over it (what a container volume or a bind mount
    over site-packages is): a real second file system inside the prefix. Needs the right to mount
    (root in a container with CAP_SYS_ADMIN); skipped otherwise."""
    pip_install(venv, world.pypi.url, "oldlib==1.0")
    site = site_packages(venv)
    saved = tmp_path / "saved-site"
    shutil.copytree(site, saved, symlinks=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "lg-test", str(site)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a second file system here: {mounted.stderr.strip()}")
    try:
        shutil.copytree(saved, site, symlinks=True, dirs_exist_ok=True)
        assert os.stat(site).st_dev != os.stat(venv).st_dev
        yield venv
    finally:
        subprocess.run(["umount", "-l", str(site)], check=False)


def test_site_packages_on_another_file_system_is_refused_before_anything_changes(
    project, split_venv
):
    before = tree_hashes(split_venv)
    dry = lockguard(project, split_venv, "clean-install", "--dry-run", "--json")
    assert dry.returncode == 1, dry.stderr
    blocked = json.loads(dry.stdout)["data"]["plan"]["blocked"]
    assert blocked and all("on another file system" in b["why"] for b in blocked)
    assert "oldlib" in blocked[0]["path"]
    done = lockguard(project, split_venv, "clean-install", "--yes")
    assert done.returncode == 5, done.stderr
    assert "on another file system" in done.stderr and "one file system" in done.stderr
    assert "run as a user that owns" not in done.stderr
    assert tree_hashes(split_venv) == before
    undone = lockguard(project, split_venv, "restore", "--list", "--json")
    assert json.loads(undone.stdout)["data"] == []  # no run began


def test_the_preflight_compares_each_folder_with_the_quarantines_file_system(tmp_path):
    if not other_file_system(tmp_path):
        pytest.skip("no second file system (/dev/shm) on this machine")
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "a.py").write_text("a\n")
    away = OTHER_FS / f"lg-test-{uuid.uuid4().hex}"
    away.mkdir()
    try:
        (away / "b.py").write_text("b\n")
        (tmp_path / "there").symlink_to(away)
        survey = survey_moves(str(tmp_path), ["here/a.py", "there/b.py"])
        assert [b.path for b in survey.blocked] == ["there/b.py"]
        assert "another file system" in survey.blocked[0].why
        assert survey.sizes == {"here/a.py": 2, "there/b.py": 2}
    finally:
        shutil.rmtree(away)


def base_purelib(venv: Path) -> Path:
    return Path(
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sys, sysconfig; base = {'base': sys.base_prefix, 'platbase': "
                "sys.base_prefix}; print(sysconfig.get_paths(vars=base)['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_system_site_venv_gets_the_locked_version_its_base_already_has(
    world, tmp_path, monkeypatch, installer
):
    """A --system-site-packages venv: its own site is the environment. The base interpreter holds
    the locked version of a package; the engine installs it into the venv all the same (it used
    to take the base's copy for installed and the run failed), check --env then passes, and
    restore gives the venv back."""
    for key, value in PIP_ENV.items():
        monkeypatch.setenv(key, value)
    venv = make_venv(tmp_path / "sys-env", system_site=True)
    base = base_purelib(venv)
    held = sorted(
        p.name[: -len(".dist-info")].split("-", 1)
        for p in base.glob("*.dist-info")
        if p.name.split("-")[0].lower() not in ("pip", "setuptools", "wheel")
        and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*-[0-9]+(\.[0-9]+)*\.dist-info", p.name)
    )
    if not held:
        pytest.skip("the base interpreter holds no plain-versioned distribution here")
    name, version = held[0]
    world.pypi.add(
        build_wheel(world.wheels, name, version, files={"lockguard_test_base_twin.py": b"T = 1\n"})
    )
    project = world.locked(tmp_path / "project", cuda="12.1", pip=[f"{name}=={version}"])
    before = tree_hashes(venv)
    done = lockguard(project, venv, "clean-install", "--yes", "--installer", installer)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site_packages(venv) / "lockguard_test_base_twin.py").exists()
    assert f"installed 1 package with {installer}" in done.stderr
    check = lockguard(project, venv, "check", "--format", "json")
    assert check.returncode == 0, check.stdout
    assert lockguard(project, venv, "restore").returncode == 0
    assert tree_hashes(venv) == before


def test_a_legacy_egg_link_is_reported_quarantined_and_restored(world, project, venv, tmp_path):
    """`setup.py develop` / legacy `pip install -e`: mydev.egg-link + easy-install.pth naming a
    project folder with mydev.egg-info. check --env reports it as not in the lock; clean-install
    moves both into the quarantine (mydev no longer imports); restore brings them back."""
    source = tmp_path / "src" / "mydev"
    (source / "mydev.egg-info").mkdir(parents=True)
    (source / "mydev.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: mydev\nVersion: 0.1.dev0\n"
    )
    (source / "mydev.egg-info" / "top_level.txt").write_text("mydev\n")
    (source / "mydev.py").write_text("DEV = True\n")
    site = site_packages(venv)
    (site / "mydev.egg-link").write_text(f"{source}\n.")
    (site / "easy-install.pth").write_text(f"{source}\n")
    python = str(venv / "bin" / "python")
    imports = [python, "-c", "import mydev"]
    assert subprocess.run(imports, capture_output=True).returncode == 0
    before = tree_hashes(venv)

    check = lockguard(project, venv, "check", "--format", "json")
    assert check.returncode == 1, check.stdout
    found = [f for f in json.loads(check.stdout)["data"]["findings"] if "mydev" in f["message"]]
    assert [f["code"] for f in found] == ["LG202"], found
    assert (
        "mydev 0.1.dev0 is installed but not in the lock (a legacy develop install"
        in (found[0]["message"])
    )
    dry = lockguard(project, venv, "clean-install", "--dry-run", "--json")
    moved = {
        m["path"].rsplit("/", 1)[-1] for m in json.loads(dry.stdout)["data"]["plan"]["quarantine"]
    }
    assert {"mydev.egg-link", "easy-install.pth"} <= moved

    done = lockguard(project, venv, "clean-install", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (site / "mydev.egg-link").exists() and not (site / "easy-install.pth").exists()
    assert subprocess.run(imports, capture_output=True).returncode != 0
    assert lockguard(project, venv, "check").returncode == 0
    assert (source / "mydev.py").exists()  # the project folder itself is never touched

    assert lockguard(project, venv, "restore").returncode == 0
    assert tree_hashes(venv) == before
    assert subprocess.run(imports, capture_output=True).returncode == 0
