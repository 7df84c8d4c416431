"""Installed environments: inventory (`check --env`), clean-install (plan, quarantine, apply,
verify, roll back), restore and interrupted runs, on real venvs filled by real pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.model import codes as codes_registry
from tests.support.envs import (
    PIP_ENV,
    compile_library,
    make_venv,
    pip_install,
    site_packages,
    tree_hashes,
)


@pytest.fixture
def project(world, tmp_path) -> Path:
    """A pip-only lock (channels = []) of a small CUDA-shaped set, resolved against the local
    index."""
    return world.locked(
        tmp_path / "project", cuda="12.1", pip=["jinja2", "oldlib", "nvidia-nccl-cu12==2.18.1"]
    )


def env_check(lg, project: Path, venv: Path, *args: str):
    result = lg(
        "check",
        "--intent",
        str(project / "lockguard.toml"),
        "--env",
        str(venv),
        "--format",
        "json",
        *args,
    )
    assert result.exit_code in (0, 1), result.stderr
    findings = json.loads(result.stdout)["data"]["findings"]
    return result.exit_code, findings


def codes(findings) -> list[str]:
    return sorted({f["code"] for f in findings})


def clean_install(lg, project: Path, venv: Path, *args: str):
    return lg(
        "clean-install", "--intent", str(project / "lockguard.toml"), "--prefix", str(venv), *args
    )


def test_clean_install_applies_the_lock_and_check_env_comes_back_clean(world, project, venv, lg):
    # an old version and a package not in the lock
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    code, findings = env_check(lg, project, venv)
    assert code == 1 and codes(findings) == ["LG200", "LG201", "LG202"]
    dry = clean_install(lg, project, venv, "--dry-run", "--json")
    plan = json.loads(dry.stdout)["data"]["plan"]
    outgoing = {o["name"]: o for o in plan["outgoing"]}
    assert (
        sorted(outgoing) == ["hjson", "oldlib"]
        and "oldlib==2.0" in plan["install"]
        and "jinja2==1.0" in plan["install"]
    )
    assert (
        outgoing["hjson"]["reason"] == "not in the lock"
        and outgoing["oldlib"]["reason"] == "upgrade to 2.0"
    )
    assert env_check(lg, project, venv)[0] == 1  # a dry run changes nothing
    result = clean_install(lg, project, venv, "--yes")
    assert result.exit_code == 0, result.stderr
    assert env_check(lg, project, venv) == (0, [])
    # quarantined with the rest of oldlib 1.0
    assert not (site_packages(venv) / "oldlib" / "libfoo.so.0").exists()
    # pip never uninstalls: lockguard moved 1.0 away
    assert "Uninstalling" not in result.stderr + result.stdout
    again = clean_install(lg, project, venv, "--yes")
    assert again.exit_code == 0 and "nothing to change" in again.stdout


def test_inventory_of_a_dirty_environment(world, project, venv, lg, tmp_path, monkeypatch):
    assert clean_install(lg, project, venv, "--yes").exit_code == 0
    site = site_packages(venv)
    # orphan .so in an owned folder
    (site / "oldlib" / "libfoo.so.0").write_bytes(b"\x7fELF left by an older oldlib")
    (site / "jinja2" / "stale.py").write_text("x = 1\n")  # unowned file in an owned folder
    (site / "ghost").mkdir()
    (site / "ghost" / "__init__.py").write_text("")  # a package folder with no distribution
    (site / "libstray.so.1").write_bytes(b"\x7fELF stray")  # an unowned shared library
    injected = tmp_path / "injected"
    injected.mkdir()
    (site / "zz-extra.pth").write_text(f"{injected}\n")  # a .pth that injects a path
    os.symlink(
        "/usr/lib/os-release" if os.path.exists("/usr/lib/os-release") else "/etc/hostname",
        site / "outlink.so",
    )
    evil = site / "evil-1.0.dist-info"
    evil.mkdir()
    (evil / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (evil / "RECORD").write_text(
        "../../../../../../../../etc/passwd,,\nevil-1.0.dist-info/METADATA,,\n.,,\n..,,\n,,\n"
    )
    # a cu11 wheel next to the cu12 ones
    pip_install(venv, world.pypi.url, "--no-deps", "nvidia-cublas-cu11")
    shadow = tmp_path / "shadow"
    first = compile_library(tmp_path / "elf", "libnccl.so.2", "libnccl.so.2")
    if first is not None:  # two NCCLs where the loader can find them
        (site / "oldlib" / "libnccl.so.2").write_bytes(first.read_bytes())
        (site / "libnccl.so.2").write_bytes(first.read_bytes())
        compile_library(shadow, "libnccl.so.2.19.3", "libnccl.so.2")
        monkeypatch.setenv("LD_LIBRARY_PATH", str(shadow))
    code, findings = env_check(lg, project, venv)
    assert code == 1
    found = codes(findings)
    for expected in ("LG202", "LG210", "LG211", "LG212", "LG214", "LG215", "LG219", "LG220"):
        assert expected in found, (expected, found)
    messages = {f["code"]: [] for f in findings}
    for f in findings:
        messages[f["code"]].append(f["message"])
    assert any("libfoo.so.0" in m for m in messages["LG211"])
    assert any("libstray.so.1" in m for m in messages["LG210"])
    assert any("etc/passwd" in m for m in messages["LG219"])
    # `.` and `..` name folders (the site, one above): invalid rows, never "files missing"
    assert any("rows that name a folder, not a file: '.', '..'" in m for m in messages["LG219"]), (
        messages["LG219"]
    )
    assert not any(f["code"] == codes_registry.RECORD_FILE_MISSING.code for f in findings), found
    if first is not None:
        assert any("libnccl.so.2:" in m or "SONAME libnccl.so.2" in m for m in messages["LG216"])
        assert any("libnccl.so.2.19.3" in m and "2.18.1" in m for m in messages["LG217"])
    plan = json.loads(clean_install(lg, project, venv, "--dry-run", "--json").stdout)["data"][
        "plan"
    ]
    quarantined = {q["path"].split("site-packages/")[-1] for q in plan["quarantine"]}
    assert {
        "oldlib/libfoo.so.0",
        "jinja2/stale.py",
        "ghost/__init__.py",
        "libstray.so.1",
        "outlink.so",
    } <= quarantined
    assert any(o["name"] == "nvidia-cublas-cu11" for o in plan["outgoing"])
    assert not any("passwd" in q["path"] for q in plan["quarantine"])  # never outside the prefix


def test_quarantine_then_restore_is_byte_identical(world, project, venv, lg):
    assert clean_install(lg, project, venv, "--yes").exit_code == 0
    site = site_packages(venv)
    (site / "oldlib" / "libfoo.so.0").write_bytes(b"\x7fELF left behind")
    os.chmod(site / "oldlib" / "libfoo.so.0", 0o750)
    (site / "ghost").mkdir()
    (site / "ghost" / "mod.py").write_text("y = 2\n")
    before = tree_hashes(venv)
    result = clean_install(lg, project, venv, "--yes")
    assert result.exit_code == 0, result.stderr
    assert not (site / "ghost" / "mod.py").exists() and env_check(lg, project, venv) == (0, [])
    # no empty folder left: it would import as a namespace package
    assert not (site / "ghost").exists()
    listing = lg("restore", "--list", "--prefix", str(venv), "--json")
    first, entry = json.loads(listing.stdout)[
        "data"
    ]  # the first run installed the lock, the second cleaned
    assert (
        entry["state"] == "complete"
        and entry["count"] == 2
        and entry["removed"] == entry["installed"] == []
    )
    manifest = json.loads(
        (venv / ".lockguard" / "quarantine" / entry["id"] / "manifest.json").read_text()
    )
    assert {e["reason"] for e in manifest["entries"]} and all(
        e["sha256"] for e in manifest["entries"]
    )
    assert lg("restore", first["id"], "--prefix", str(venv)).exit_code == 2  # newest first
    assert lg("restore", entry["id"], "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before  # every byte and mode back, the ghost/ folder too
    assert lg("restore", entry["id"], "--prefix", str(venv)).exit_code == 2  # already restored


def test_failed_apply_is_rolled_back_with_exit_4_when_the_index_is_gone(world, project, venv, lg):
    """The index stops answering after the quarantine moved its files: lockguard's download of
    the first locked file fails (exit 4, naming it) and the run puts everything back."""
    site = site_packages(venv)
    (site / "libstray.so.1").write_bytes(b"\x7fELF stray")
    before = tree_hashes(venv)
    world.pypi.stop()  # nothing can be downloaded now
    result = clean_install(lg, project, venv, "--yes")
    assert result.exit_code == 4
    assert "downloading " in result.stderr and ".whl" in result.stderr
    assert (
        "rolled back: removed 0 files the run had installed, put back 1 quarantined file"
        in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert tree_hashes(venv) == before
    (entry,) = json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]
    assert entry["state"] == "aborted"


def lockguard_child(
    project: Path, venv: Path, *args: str, faults=()
) -> subprocess.CompletedProcess:
    """clean-install (or another command) in a child process, with faults injected through the
    tests' seam (tests/support/fault_plugin)."""
    from tests.support.faults import fault_env

    command = [
        sys.executable,
        "-m",
        "lockguard",
        args[0],
        "--intent",
        str(project / "lockguard.toml"),
        "--prefix",
        str(venv),
        *args[1:],
    ]
    return subprocess.run(
        command,
        env=fault_env(*faults, base={**os.environ, **PIP_ENV}),
        capture_output=True,
        text=True,
        timeout=300,
    )


MOVE = "lockguard.io.env.quarantine:move_file"


def test_permission_error_stops_and_puts_everything_back(world, project, venv, lg):
    site = site_packages(venv)
    for name in ("liba.so.1", "libb.so.1", "libc.so.1"):
        (site / name).write_bytes(b"\x7fELF " + name.encode())
    before = tree_hashes(venv)
    eacces = {
        "target": MOVE,
        "call": 3,
        "action": "raise",
        "errno": 13,
        "filename": str(site / "libc.so.1"),
    }
    result = lockguard_child(project, venv, "clean-install", "--yes", faults=[eacces])
    assert result.returncode == 5, result.stderr
    assert (
        f"Permission denied: {site / 'libc.so.1'}" in result.stderr and "put back" in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert tree_hashes(venv) == before


def test_killed_run_is_undone_by_restore_or_the_next_clean_install(world, project, venv, lg):
    site = site_packages(venv)
    for name in ("liba.so.1", "libb.so.1", "libc.so.1", "libd.so.1"):
        (site / name).write_bytes(b"\x7fELF " + name.encode())
    before = tree_hashes(venv)
    die = {"target": MOVE, "call": 3, "action": "exit", "code": 137}  # killed with two files moved
    killed = lockguard_child(project, venv, "clean-install", "--yes", faults=[die])
    assert killed.returncode == 137
    names = ("liba.so.1", "libb.so.1", "libc.so.1", "libd.so.1")
    assert sum(not (site / n).exists() for n in names) == 2  # two moved before the kill
    (entry,) = json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]
    assert entry["state"] == "incomplete" and entry["moved"] == 2
    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before
    killed = lockguard_child(project, venv, "clean-install", "--yes", faults=[die])
    assert killed.returncode == 137
    # the next run undoes the interrupted one first
    result = clean_install(lg, project, venv, "--yes")
    assert result.exit_code == 0, result.stderr
    assert (
        "was interrupted; undone: removed 0 files it had installed, put back 2 files"
        in result.stderr
    )
    assert env_check(lg, project, venv) == (0, [])


def test_python_option_and_verify_files(world, project, venv, lg):
    assert (
        lg(
            "clean-install",
            "--intent",
            str(project / "lockguard.toml"),
            "--python",
            str(venv / "bin" / "python"),
            "--yes",
        ).exit_code
        == 0
    )
    init = site_packages(venv) / "jinja2" / "__init__.py"
    init.write_text(init.read_text() + "# tampered\n")
    assert env_check(lg, project, venv) == (0, [])
    code, findings = env_check(lg, project, venv, "--verify-files")
    assert code == 1 and codes(findings) == ["LG203"] and "jinja2" in findings[0]["message"]
    assert "clean-install --verify-files" in findings[0]["hint"]
    plan = json.loads(clean_install(lg, project, venv, "--dry-run", "--json").stdout)["data"][
        "plan"
    ]
    assert plan["install"] == []  # without hashing, nothing looks wrong
    plan = json.loads(
        clean_install(lg, project, venv, "--dry-run", "--json", "--verify-files").stdout
    )["data"]["plan"]
    assert (
        plan["install"] == ["jinja2==1.0"]
        and plan["outgoing"][0]["reason"] == "repair: 1 file changed"
    )
    assert clean_install(lg, project, venv, "--yes", "--verify-files").exit_code == 0
    assert env_check(lg, project, venv, "--verify-files") == (0, [])


def test_user_site_duplicate_is_reported_not_touched(
    world, project, venv_template, tmp_path, lg, monkeypatch
):
    for key, value in PIP_ENV.items():
        monkeypatch.setenv(key, value)
    venv = make_venv(tmp_path / "sys-env", system_site=True)
    userbase = tmp_path / "userbase"
    monkeypatch.setenv("PYTHONUSERBASE", str(userbase))
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--user",
            "--index-url",
            world.pypi.url,
            "jinja2==1.0",
            "--no-deps",
            "--force-reinstall",
        ],
        env={**os.environ, **PIP_ENV},
        capture_output=True,
        text=True,
    )
    # pip refuses a user copy that would lose, so first
    assert done.returncode == 0, done.stdout + done.stderr
    applied = clean_install(lg, project, venv, "--yes")
    # applied; the user copy outside the prefix is reported, never changed, and as an error it
    # fails the run as it fails `check --env` (one severity, issue 35)
    assert applied.exit_code == 1, applied.stderr
    assert "error: LG213 " in applied.stderr
    assert (
        "the lock's files are installed, but 1 error outside what clean-install changes remains"
        in applied.stderr
    )
    again = clean_install(lg, project, venv, "--yes")
    assert again.exit_code == 1 and "nothing to change" in again.stdout
    code, findings = env_check(lg, project, venv)
    assert code == 1
    duplicate = [f for f in findings if f["code"] == "LG213" and "jinja2" in f["message"]]
    # named where it lies, with a fix pip has (`pip uninstall` takes no --user)
    assert duplicate
    assert f"in the user site {os.path.realpath(userbase)}/lib/" in duplicate[0]["message"]
    hint = duplicate[0]["hint"]
    assert "-m pip uninstall jinja2` run outside any environment" in hint and "--user" not in hint
    assert "PYTHONNOUSERSITE=1" in hint
    user_copy = next(userbase.glob("lib/python3*/site-packages/jinja2-1.0.dist-info"))
    plan = json.loads(clean_install(lg, project, venv, "--dry-run", "--json").stdout)["data"][
        "plan"
    ]
    assert not any(str(userbase) in q["path"] for q in plan["quarantine"])
    assert any(f["code"] == "LG213" for f in plan["reported"])
    assert user_copy.exists()


def test_refuses_a_stale_lock_and_needs_a_target(world, project, venv, lg):
    assert lg("clean-install", "--intent", str(project / "lockguard.toml")).exit_code == 2
    lock = project / "requirements.lock"
    lock.write_text(lock.read_text().replace("jinja2==1.0", "jinja2==1.1"))
    result = clean_install(lg, project, venv, "--yes")
    assert result.exit_code == 2 and "edited by hand" in result.stderr


def test_conda_prefix_installed_from_a_local_channel(world, tmp_path, lg):
    from tests.support.conda_channel import build_channel

    channel = build_channel(tmp_path / "conda")
    project = tmp_path / "conda-project"
    world.intent(
        project, cuda="none", pip=[], channels=[channel.as_uri()], extra='conda = ["numpy"]\n'
    )
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    prefix = tmp_path / "conda-env"
    (prefix / "conda-meta").mkdir(parents=True)  # an empty conda prefix
    plan = json.loads(clean_install(lg, project, prefix, "--dry-run", "--json").stdout)["data"][
        "plan"
    ]
    assert plan["conda"] == ["numpy", "python"]
    result = clean_install(lg, project, prefix, "--yes")
    assert result.exit_code == 0, result.stderr
    records = {
        json.loads(p.read_text())["name"]: json.loads(p.read_text())
        for p in (prefix / "conda-meta").glob("*.json")
    }
    assert records["numpy"]["version"] == "1.26.4" and records["python"]["build"] == "h0_cpython"
    assert os.access(prefix / "bin" / "python", os.X_OK)
    assert env_check(lg, project, prefix) == (0, [])
    (prefix / "lib").mkdir(exist_ok=True)
    # an unowned library in lib/
    (prefix / "lib" / "libnccl.so.2").write_bytes(b"\x7fELF system copy")
    code, findings = env_check(lg, project, prefix)
    assert codes(findings) == ["LG210"]


def test_record_rows_naming_a_folder_or_nothing_are_invalid_rows_and_clean_install_fails_as_check(
    world, project, venv, lg
):
    # rows `jinja2` (its folder, without a slash) and `` (no path at all) are invalid rows
    # (LG219), never "files of its RECORD are missing"; a RECORD path out of the prefix is what a
    # clean-install never touches, so it fails as `check --env` does (one severity), not "matches"
    assert clean_install(lg, project, venv, "--yes").exit_code == 0
    site = site_packages(venv)
    record = next(site.glob("jinja2-*.dist-info")) / "RECORD"
    record.write_text(record.read_text() + "jinja2,,\n,,\n../../../../../../../../etc/hostname,,\n")
    code, findings = env_check(lg, project, venv)
    invalid = [f["message"] for f in findings if f["code"] == "LG219"]
    assert code == 1 and len(invalid) == 1, findings
    assert "rows that name a folder, not a file: 'jinja2'" in invalid[0], invalid
    assert "1 empty row" in invalid[0] and "etc/hostname" in invalid[0], invalid
    assert not any(f["code"] == codes_registry.RECORD_FILE_MISSING.code for f in findings)
    for args in (("--yes",), ("--dry-run",)):
        result = clean_install(lg, project, venv, *args)
        assert result.exit_code == code, (args, result.exit_code, result.output)
        assert "LG219" in result.output and "matches the lock" not in result.output, result.output
