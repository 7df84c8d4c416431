"""clean-install's uv engine (io/env/engines/uv.py), on real venvs from the local index, run as
child processes: it installs exactly the locked versions (INSTALLER `uv`, files copied, never
linked to uv's cache), restore gives the tree back byte for byte, a venv without pip works, no uv
config file is read, a failure of uv rolls back, and `--installer pip` still installs with pip."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.envs import ENV_PYTHON, PIP_ENV, pip_install, site_packages, tree_hashes
from tests.support.faults import fault_env
from tests.support.wheels import build_wheel


@pytest.fixture
def project(world, tmp_path) -> Path:
    world.pypi.add(
        build_wheel(
            world.wheels,
            "scripty",
            "1.0",
            files={
                "scripty/__init__.py": b"S = 1\n",
                "scripty-1.0.data/scripts/scripty-run": b"#!python\nprint('run')\n",
            },
        )
    )
    return world.locked(tmp_path / "project", cuda="12.1", pip=["jinja2", "oldlib", "scripty"])


def lockguard(project: Path, venv: Path, *args: str, env: dict | None = None, faults=()):
    """`lockguard clean-install|check|restore ... --prefix VENV` in a child process."""
    command, rest = args[0], args[1:]
    where = ["--env", str(venv)] if command == "check" else ["--prefix", str(venv)]
    intent = [] if command == "restore" else ["--intent", str(project / "lockguard.toml")]
    base = {**os.environ, **PIP_ENV, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "lockguard", command, *intent, *where, *rest],
        env=fault_env(*faults, base=base) if faults else base,
        capture_output=True,
        text=True,
        timeout=300,
    )


def installer_of(venv: Path, name: str) -> str:
    (info,) = site_packages(venv).glob(f"{name}-*.dist-info")
    return (info / "INSTALLER").read_text().strip()


def test_uv_installs_exactly_the_lock_and_restore_gives_the_tree_back(world, project, venv):
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    before = tree_hashes(venv)
    dry = lockguard(project, venv, "clean-install", "--dry-run")
    assert "with uv (--require-hashes --no-deps)" in dry.stdout, dry.stdout
    done = lockguard(project, venv, "clean-install", "--yes")
    assert done.returncode == 0, done.stderr
    assert "installed 4 packages with uv" in done.stderr
    check = lockguard(project, venv, "check", "--format", "json")
    assert check.returncode == 0 and json.loads(check.stdout)["data"]["findings"] == []
    site = site_packages(venv)
    assert {installer_of(venv, n) for n in ("jinja2", "oldlib", "scripty")} == {"uv"}
    assert not list(site.glob("hjson*")) and (venv / "bin" / "scripty-run").exists()
    # copied, not linked: a file edited in the prefix cannot edit uv's cache
    assert (site / "oldlib" / "__init__.py").stat().st_nlink == 1
    # uv compiles no bytecode for what it installs (Python writes it on import)
    assert not list((site / "scripty").rglob("*.pyc"))

    restored = lockguard(project, venv, "restore")
    assert restored.returncode == 0, restored.stderr
    assert tree_hashes(venv) == before


def test_a_file_edited_after_install_does_not_change_uvs_cache(project, venv):
    assert lockguard(project, venv, "clean-install", "--yes").returncode == 0
    cache = Path(os.environ["UV_CACHE_DIR"])
    edited = site_packages(venv) / "scripty" / "__init__.py"
    with open(edited, "a") as handle:
        handle.write("EDITED = True\n")
    cached = list(cache.rglob("scripty/__init__.py"))
    assert cached and all(p.read_bytes() == b"S = 1\n" for p in cached)


def test_a_venv_without_pip_is_installed_by_uv_and_pip_says_so(project, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([ENV_PYTHON, "-m", "venv", "--without-pip", str(bare)], check=True)
    with_pip = lockguard(project, bare, "clean-install", "--yes", "--installer", "pip")
    assert with_pip.returncode == 5 and "No module named pip" in with_pip.stderr
    assert "--installer uv" in with_pip.stderr
    done = lockguard(project, bare, "clean-install", "--yes")
    assert done.returncode == 0, done.stderr
    assert installer_of(bare, "jinja2") == "uv"
    assert not list(site_packages(bare).glob("pip*"))


def test_installer_pip_still_installs_with_pip(project, venv):
    dry = lockguard(project, venv, "clean-install", "--dry-run", "--installer", "pip", "--json")
    assert json.loads(dry.stdout)["data"]["plan"]["installer"] == "pip"
    done = lockguard(project, venv, "clean-install", "--yes", "--installer", "pip")
    assert done.returncode == 0, done.stderr
    assert "installed 4 packages with pip" in done.stderr
    assert installer_of(venv, "jinja2") == "pip"


def test_no_uv_config_file_is_read(project, venv, tmp_path):
    """A uv.toml that points at an index that does not exist and asks for hard links changes
    nothing: uv runs with --no-config."""
    config = tmp_path / "xdg"
    (config / "uv").mkdir(parents=True)
    (config / "uv" / "uv.toml").write_text(
        'index-url = "http://127.0.0.1:9/nothing/simple"\nno-index = true\nlink-mode = "hardlink"\n'
    )
    env = {"XDG_CONFIG_HOME": str(config), "UV_INDEX_URL": "http://127.0.0.1:9/simple"}
    done = lockguard(project, venv, "clean-install", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert installer_of(venv, "jinja2") == "uv"


def test_a_uv_failure_mid_install_rolls_back(project, venv):
    """uv installs jinja2 and oldlib, then cannot write scripty's script over a folder: it fails
    part-way, and the run puts the environment back as it was."""
    (venv / "bin" / "scripty-run").mkdir()
    (venv / "bin" / "scripty-run" / "keep").write_text("mine\n")
    before = tree_hashes(venv)
    done = lockguard(project, venv, "clean-install", "--yes")
    assert done.returncode == 5, done.stderr
    assert re.search(r"uv pip install -r install(\.\d+)?\.txt failed", done.stderr), done.stderr
    # part-way: uv had installed jinja2, markupsafe and oldlib (more than its own .lock file)
    removed = re.search(r"rolled back: removed (\d+) files the run had installed", done.stderr)
    assert removed and int(removed.group(1)) > 1, done.stderr
    assert tree_hashes(venv) == before


def test_a_kill_after_uv_installed_is_undone_by_restore(project, venv):
    before = tree_hashes(venv)
    killed = {
        "target": "lockguard.io.env.engines.registry:run_engine",
        "action": "exit",
        "when": "after",
        "code": 137,
    }
    died = lockguard(project, venv, "clean-install", "--yes", faults=[killed])
    assert died.returncode == 137
    assert tree_hashes(venv) != before
    restored = lockguard(project, venv, "restore")
    assert restored.returncode == 0, restored.stderr
    assert tree_hashes(venv) == before


def test_uv_that_cannot_start_exits_2_and_names_installer_pip(project, venv, tmp_path):
    """No uv binary for this machine: exit 2 before anything changes, naming --installer pip."""
    fake = tmp_path / "fake"
    (fake / "uv").mkdir(parents=True)
    (fake / "uv" / "__init__.py").write_text(
        "def find_uv_bin():\n    raise FileNotFoundError('no uv binary for this platform')\n"
    )
    before = tree_hashes(venv)
    env = {"PYTHONPATH": str(fake)}
    done = lockguard(project, venv, "clean-install", "--yes", env=env)
    assert done.returncode == 2, done.stderr
    assert "no uv binary for this platform" in done.stderr and "--installer pip" in done.stderr
    assert tree_hashes(venv) == before
    assert not (venv / ".lockguard" / "quarantine").exists()  # refused before the transaction


def test_uvs_downloads_get_lockguards_request_bound_unless_the_user_set_uvs(monkeypatch):
    """No answer within LOCKGUARD_HTTP_TIMEOUT, tried twice: the bound lockguard's own requests
    have (issue 32); a user's own UV_HTTP_TIMEOUT is kept."""
    from lockguard.io.env.engines import uv as uv_engine

    monkeypatch.delenv("UV_HTTP_TIMEOUT", raising=False)
    monkeypatch.delenv("UV_HTTP_RETRIES", raising=False)
    monkeypatch.delenv("LOCKGUARD_HTTP_TIMEOUT", raising=False)
    env = uv_engine._env()
    assert (env["UV_HTTP_TIMEOUT"], env["UV_HTTP_RETRIES"]) == ("10", "1")
    monkeypatch.setenv("LOCKGUARD_HTTP_TIMEOUT", "2.5")
    assert uv_engine._env()["UV_HTTP_TIMEOUT"] == "3"  # uv reads whole seconds
    monkeypatch.setenv("UV_HTTP_TIMEOUT", "60")
    assert uv_engine._env()["UV_HTTP_TIMEOUT"] == "60"
