"""clean-install on the environments people really have (issue 26): stale bytecode next to removed
sources, legacy `.egg-info` installs (built for real: setuptools' `setup.py install`, and pip
23.0.1's legacy path where a Python 3.10 is at hand), an interrupted restore, warnings that fail
`check --env` only with --strict, the disk a quarantine costs and pruning it, and a plan a person
can read (grouped stale files, one package a line, what pip really installed)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.envs import ENV_CACHE_TAG, PIP_ENV, pip_install, site_packages, tree_hashes
from tests.support.faults import fault_env
from tests.support.wheels import build_sdist, build_wheel

TAG = ENV_CACHE_TAG  # what the test venvs' interpreter compiles


def run(lg, project: Path, *args: str):
    return lg(args[0], "--intent", str(project / "lockguard.toml"), *args[1:])


def check_env(lg, project: Path, venv: Path, *args: str):
    result = run(lg, project, "check", "--env", str(venv), "--format", "json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)["data"]["findings"]


def dry_plan(lg, project: Path, venv: Path, *args: str) -> dict:
    result = run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run", "--json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)["data"]["plan"]


def apply(lg, project: Path, venv: Path, *args: str):
    return run(lg, project, "clean-install", "--prefix", str(venv), "--yes", *args)


def imports(venv: Path, module: str) -> bool:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import {module}"], capture_output=True, text=True
    )
    return done.returncode == 0


def runs(lg, venv: Path) -> list[dict]:
    return json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]


def compile_folder(venv: Path, folder: Path) -> None:
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "compileall", "-q", str(folder)], check=True
    )


@pytest.fixture
def project(world, tmp_path) -> Path:
    return world.locked(tmp_path / "project", cuda="12.1", pip=["jinja2", "oldlib"])


# -- 1. stale bytecode -----------------------------------------------------------------------------


def test_bytecode_goes_with_its_quarantined_source_and_the_folder_no_longer_imports(
    project, venv, lg
):
    assert apply(lg, project, venv).exit_code == 0
    # left by an older jinja2, compiled when it ran
    stale = site_packages(venv) / "jinja2" / "oldpkg"
    stale.mkdir()
    (stale / "__init__.py").write_text("X = 1\n")
    compile_folder(venv, stale)
    compiled = stale / "__pycache__" / f"__init__.{TAG}.pyc"
    assert compiled.exists() and imports(venv, "jinja2.oldpkg")
    before = tree_hashes(venv)
    moving = {
        q["path"].split("site-packages/")[1]: q for q in dry_plan(lg, project, venv)["quarantine"]
    }
    assert set(moving) == {
        "jinja2/oldpkg/__init__.py",
        f"jinja2/oldpkg/__pycache__/__init__.{TAG}.pyc",
    }
    assert (
        moving[f"jinja2/oldpkg/__pycache__/__init__.{TAG}.pyc"]["reason"]
        == "bytecode of a source that moves into the quarantine"
    )
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert not stale.exists() and not imports(venv, "jinja2.oldpkg")  # as after a fresh install
    assert check_env(lg, project, venv, "--verify-files") == (0, [])
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


def test_bytecode_whose_source_is_gone_is_reported_and_quarantined(project, venv, lg):
    assert apply(lg, project, venv).exit_code == 0
    site = site_packages(venv)
    ghost = site / "jinja2" / "oldpkg"
    ghost.mkdir()
    (ghost / "__init__.py").write_text("X = 1\n")
    (site / "jinja2" / "gone.py").write_text("Y = 2\n")
    compile_folder(venv, site / "jinja2")
    (ghost / "__init__.py").unlink()  # the sources went (an upgrade, an rm), their bytecode stayed
    (site / "jinja2" / "gone.py").unlink()
    assert imports(venv, "jinja2.oldpkg")  # a namespace package made of a __pycache__ folder
    for extra in ((), ("--verify-files",)):
        code, findings = check_env(lg, project, venv, *extra)
        assert code == 1 and sorted((f["code"], f["severity"]) for f in findings) == [
            ("LG223", "error"),
            ("LG223", "warning"),
        ]
        error = next(f for f in findings if f["severity"] == "error")
        assert (
            "jinja2/oldpkg/__pycache__ holds 1 compiled file whose source is gone"
            in error["message"]
        )
        assert "`import jinja2.oldpkg` still succeeds" in error["message"]
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert not ghost.exists() and not imports(venv, "jinja2.oldpkg")
    assert not (site / "jinja2" / "__pycache__" / f"gone.{TAG}.pyc").exists()
    # bytecode of a source that is there stays
    assert (site / "jinja2" / "__pycache__" / f"__init__.{TAG}.pyc").exists()
    assert check_env(lg, project, venv) == (0, [])


# -- 2. legacy .egg-info installs ------------------------------------------------------------------

SETUP_PY = (
    "from setuptools import setup\n"
    "setup(name='legacy-pkg', version='{version}', packages=['legacy_pkg'])\n"
)


def setuptools_install(venv: Path, root: Path, version: str) -> None:
    """`setup.py install --single-version-externally-managed` with the venv's own setuptools: an
    .egg-info folder and no list of the files it installed."""
    source = root / f"legacy-src-{version}"
    (source / "legacy_pkg").mkdir(parents=True)
    (source / "setup.py").write_text(SETUP_PY.format(version=version))
    (source / "legacy_pkg" / "__init__.py").write_text(f"V = {version!r}\n")
    (source / "legacy_pkg" / "old_only.py").write_text("OLD = True\n")
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "setup.py",
            "install",
            "--single-version-externally-managed",
            "--record",
            str(root / "record.txt"),
        ],
        cwd=source,
        capture_output=True,
        text=True,
        env={**os.environ, **PIP_ENV},
    )
    if done.returncode != 0 and "No module named 'setuptools'" in done.stderr:
        pytest.skip("this interpreter's venvs have no setuptools")
    assert done.returncode == 0, done.stderr


def add_legacy_wheels(world) -> None:
    for version in ("1.0", "2.0"):
        world.pypi.add(
            build_wheel(
                world.wheels,
                "legacy-pkg",
                version,
                files={"legacy_pkg/__init__.py": f"V = {version!r}\n".encode()},
            )
        )


def test_a_setuptools_egg_info_install_is_an_installed_distribution_and_is_replaced(
    world, venv, lg, tmp_path
):
    add_legacy_wheels(world)
    setuptools_install(venv, tmp_path, "1.0")
    site = site_packages(venv)
    (info,) = site.glob("legacy_pkg-1.0-*.egg-info")
    assert not (info / "installed-files.txt").exists() and (info / "top_level.txt").exists()
    project = world.locked(tmp_path / "project", cuda="12.1", pip=["legacy-pkg==2.0"])
    code, findings = check_env(lg, project, venv)
    assert code == 1 and [f["code"] for f in findings] == [
        "LG201"
    ]  # not "not installed", not "belongs to no one"
    assert findings[0]["message"] == (
        "legacy-pkg 1.0 is installed, the lock has 2.0 (a legacy .egg-info install; its "
        "files inferred from its top-level names (top_level.txt), not recorded)"
    )
    plan = dry_plan(lg, project, venv)
    (outgoing,) = plan["outgoing"]
    assert outgoing["name"] == "legacy-pkg" and outgoing["reason"] == "upgrade to 2.0"
    assert "inferred from its top-level names" in outgoing["note"]
    moving = {q["path"].split("site-packages/")[1] for q in plan["quarantine"]}
    assert not moving  # all of it goes as the outgoing distribution's files
    before = tree_hashes(venv)
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert not info.exists() and not (site / "legacy_pkg" / "old_only.py").exists()
    assert list(site.glob("legacy_pkg-2.0.dist-info")) and imports(venv, "legacy_pkg")
    assert check_env(lg, project, venv, "--verify-files") == (0, [])
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


def test_a_locked_version_installed_as_egg_info_is_repaired_and_only_a_warning(
    world, venv, lg, tmp_path
):
    add_legacy_wheels(world)
    setuptools_install(venv, tmp_path, "1.0")
    project = world.locked(tmp_path / "project", cuda="12.1", pip=["legacy-pkg==1.0"])
    code, findings = check_env(lg, project, venv)
    assert code == 0 and [(f["code"], f["severity"]) for f in findings] == [("LG205", "warning")]
    assert "no RECORD, so nothing can verify its files" in findings[0]["message"]
    assert check_env(lg, project, venv, "--strict")[0] == 1
    plan = dry_plan(lg, project, venv)
    assert (
        plan["install"] == ["legacy-pkg==1.0"]
        and plan["outgoing"][0]["reason"] == "repair: a legacy .egg-info install"
    )
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert "installed 1 package with uv" in result.stderr
    site = site_packages(venv)
    assert not list(site.glob("*.egg-info")) and list(site.glob("legacy_pkg-1.0.dist-info"))
    assert check_env(lg, project, venv, "--verify-files") == (0, [])


def python310() -> str | None:
    """A Python 3.10 whose bundled pip (23.0.1) still installs with `setup.py install`."""
    candidates = [shutil.which("python3.10") or ""]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3.10")))
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def test_pip_23_0_1_legacy_install_with_installed_files_txt_is_repaired(
    world, lg, tmp_path, monkeypatch
):
    python = python310()
    if python is None:
        pytest.skip("no Python 3.10 here (its bundled pip 23.0.1 makes the legacy install)")
    for key, value in PIP_ENV.items():
        monkeypatch.setenv(key, value)
    world.pypi.add(
        build_sdist(
            world.wheels,
            "legacy-pkg",
            "1.0",
            setup_py=SETUP_PY.format(version="1.0"),
            files={"legacy_pkg/util.py": "U = 1\n"},
        )
    )
    venv = tmp_path / "py310"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--index-url",
            world.pypi.url,
            "legacy-pkg==1.0",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "legacy 'setup.py install' method" in done.stdout + done.stderr  # pip 23.0.1's own words
    site = site_packages(venv)
    (info,) = site.glob("legacy_pkg-1.0-*.egg-info")
    assert (info / "installed-files.txt").exists()
    world.pypi.add(
        build_wheel(world.wheels, "legacy-pkg", "1.0", files={"legacy_pkg/__init__.py": b""})
    )
    project = world.locked(
        tmp_path / "project", cuda="12.1", python="3.10", pip=["legacy-pkg==1.0"]
    )
    code, findings = check_env(lg, project, venv)
    assert [f["code"] for f in findings] == [
        "LG205"
    ] and "installed-files.txt lists them" in findings[0]["message"]
    before = tree_hashes(venv)
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert not info.exists() and not (site / "legacy_pkg" / "util.py").exists()
    assert check_env(lg, project, venv, "--verify-files") == (0, [])
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


# -- 3. an interrupted restore ---------------------------------------------------------------------


def test_an_interrupted_restore_is_lg222_first_and_clean_install_finishes_it(
    world, project, venv, lg
):
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    before = tree_hashes(venv)
    assert apply(lg, project, venv).exit_code == 0
    (run_,) = runs(lg, venv)
    die = {
        "target": "lockguard.io.env.undo:put_back_file",
        "call": 3,
        "action": "exit",
        "code": 137,
    }
    killed = subprocess.run(
        [sys.executable, "-m", "lockguard", "restore", "--prefix", str(venv)],
        env=fault_env(die, base={**os.environ, **PIP_ENV}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == 137, killed.stderr
    (half,) = runs(lg, venv)
    assert half["state"] == "restore-interrupted" and half["put_back"] == 2  # not "complete"
    text = run(lg, project, "check", "--env", str(venv))
    assert text.exit_code == 1
    first = text.stdout.splitlines()[1]  # the first finding: the interrupted restore, with its fix
    assert first.startswith(
        f"  LG222 error: the restore of clean-install {run_['id']} was interrupted (2 of "
    )
    assert f"`lockguard restore {run_['id']} --prefix" in text.stdout.splitlines()[2]
    dry = run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run")
    assert dry.exit_code == 1 and f"the restore of clean-install {run_['id']}" in dry.stdout
    assert (
        "quarantine" not in dry.stdout.split("was interrupted")[0]
        and "stale files" not in dry.stdout
    )
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    assert (
        f"the restore of clean-install {run_['id']} was interrupted; finished it" in result.stderr
    )
    assert [r["state"] for r in runs(lg, venv)] == ["restored", "complete"]
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


# -- 4. warnings fail check --env only with --strict -----------------------------------------------


def test_check_env_with_only_warnings_exits_0_and_1_with_strict(project, venv, lg, tmp_path):
    assert apply(lg, project, venv).exit_code == 0
    injected = tmp_path / "elsewhere"
    injected.mkdir()
    # no package owns it: a warning
    (site_packages(venv) / "zz-extra.pth").write_text(f"{injected}\n")
    code, findings = check_env(lg, project, venv, "--verify-files")
    assert code == 0 and [(f["code"], f["severity"]) for f in findings] == [("LG214", "warning")]
    assert check_env(lg, project, venv, "--strict")[0] == 1
    text = run(lg, project, "check", "--env", str(venv))
    assert text.exit_code == 0 and "LG214 warning" in text.stdout


# -- 5. the disk a quarantine costs, and prune -----------------------------------------------------


def folder_bytes(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_dir())


def test_the_quarantine_size_is_said_and_prune_gives_it_back(world, project, venv, lg):
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    site = site_packages(venv)
    (site / "libstray.so.1").write_bytes(b"\x7fELF" + b"s" * 5000)
    plan = dry_plan(lg, project, venv)
    assert (
        plan["quarantine_bytes"] > 5000
        and plan["quarantine_folder"] == f"{os.path.realpath(venv)}/.lockguard/quarantine/"
    )
    text = run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run")
    assert f"the quarantine will hold {plan['quarantine_files']} files, " in text.stdout
    first = apply(lg, project, venv)
    assert first.exit_code == 0, first.stderr
    (run1,) = runs(lg, venv)
    files = venv / ".lockguard" / "quarantine" / run1["id"] / "files"
    held = folder_bytes(files)
    assert held == plan["quarantine_bytes"]  # what the plan said is what the quarantine holds
    assert f"the quarantine holds {plan['quarantine_files']} files, " in first.stderr
    assert "`lockguard restore --prune --prefix" in first.stderr
    (site / "libstray.so.2").write_bytes(b"\x7fELF another")
    assert apply(lg, project, venv).exit_code == 0
    run1, run2 = runs(lg, venv)
    assert run1["bytes"] > held and run2["state"] == "complete"  # the listing says what each takes
    quarantine = venv / ".lockguard" / "quarantine"
    # stdin is no terminal: it needs --yes
    refused = lg("restore", "--prune", "--prefix", str(venv))
    assert refused.exit_code == 2 and "pass --yes" in refused.stderr
    assert {p.name for p in quarantine.iterdir()} == {run1["id"], run2["id"]}
    kept = lg("restore", "--prune", "--keep", "1", "--yes", "--prefix", str(venv))
    assert kept.exit_code == 0, kept.stderr
    assert f"{run1['id']}" in kept.stderr and "can no longer be restored" in kept.stderr
    assert run2["id"] not in kept.stderr.split("pruned")[0].split("pruning")[1].split("\n", 1)[1]
    assert "pruned 1 run, freed " in kept.stderr
    assert [r["id"] for r in runs(lg, venv)] == [run2["id"]]
    assert lg("restore", "--prefix", str(venv)).exit_code == 0  # the kept run still restores
    gone = lg("restore", "--prune", "--yes", "--prefix", str(venv), "--json")
    data = json.loads(gone.stdout)["data"]
    assert data["pruned"] == [run2["id"]] and data["freed_bytes"] > 0
    assert runs(lg, venv) == [] and not any(quarantine.iterdir())


# -- 6. a plan a person can read; what pip really installed ----------------------------------------


def test_the_plan_groups_stale_files_and_lists_one_package_a_line(world, project, venv, lg):
    site = site_packages(venv)
    (site / "ghost").mkdir()
    for name in ("a.py", "b.py", "c.py", "d.py"):
        (site / "ghost" / name).write_text("x = 1\n")
    (site / "libstray.so.1").write_bytes(b"\x7fELF stray")
    text = run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run")
    lines = text.stdout.splitlines()
    rel = os.path.relpath(site, os.path.realpath(venv))
    assert f"    {rel}/ghost/  4 files, 24 bytes: {rel}/ghost belongs to no distribution" in lines
    assert not any(line.strip().startswith(f"{rel}/ghost/a.py") for line in lines)  # grouped
    assert "      a.py  (6 bytes)" not in lines  # four files: one line (three are named)
    install = lines.index(next(line for line in lines if line.startswith("  install ")))
    assert lines[install + 1 : install + 4] == [
        "    jinja2==1.0",
        "    markupsafe==2.1.5",
        "    oldlib==2.0",
    ]
    verbose = lg(
        "-v",
        "clean-install",
        "--intent",
        str(project / "lockguard.toml"),
        "--prefix",
        str(venv),
        "--dry-run",
    )
    assert "      a.py  (6 bytes)" in verbose.stdout.splitlines()  # -v lists every file


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_pip_skipping_a_package_fails_instead_of_claiming_it(world, project, venv, lg, installer):
    site = site_packages(venv)
    # distutils' single-file form: pip and uv take it for jinja2 1.0, lockguard finds no files to it
    (site / "jinja2-1.0-py3.11.egg-info").write_text(
        "Metadata-Version: 1.1\nName: jinja2\nVersion: 1.0\n"
    )
    before = tree_hashes(venv)
    result = apply(lg, project, venv, "--installer", installer)
    assert result.exit_code == 5, result.stderr
    said = " (it says: Requirement already satisfied: jinja2==1.0" if installer == "pip" else ""
    assert f"{installer} did not install jinja2==1.0{said}" in result.stderr
    assert f"installed 3 packages with {installer}" not in result.stderr
    assert "rolled back" in result.stderr
    assert tree_hashes(venv) == before


def test_the_hashing_for_the_manifest_is_said(world, project, venv, lg):
    pip_install(venv, world.pypi.url, "oldlib==1.0")
    result = apply(lg, project, venv)
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(
        line.startswith("hashing ") and line.endswith(" for the quarantine manifest")
        for line in lines
    )
    assert "installed 3 packages with uv" in lines
