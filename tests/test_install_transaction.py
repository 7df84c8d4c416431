"""clean-install as a transaction, on real venvs filled by real pip from a local index: a CUDA
family switch whose wheels install the same paths with different bytes, a kill during pip, a
deleted shared library found and repaired, an import smoke that fails, and restore giving back a
byte- and mode-identical tree every time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.envs import (
    ENV_CACHE_TAG,
    PIP_ENV,
    pip_install,
    site_packages,
    tree_hashes,
)
from tests.support.wheels import build_wheel

CU11 = {
    "nvidia/__init__.py": b"",
    "nvidia/foo/__init__.py": b"# the cu11 build\n",
    "nvidia/foo/lib/libfoo.so.8": b"\x7fELF libfoo built for CUDA 11",
    "nvidia/foo/include/foo.h": b"/* 11 */\n",
}
CU12 = {
    "nvidia/__init__.py": b"",
    "nvidia/foo/__init__.py": b"# the cu12 build\n",
    "nvidia/foo/lib/libfoo.so.8": b"\x7fELF libfoo built for CUDA 12, a little longer",
    "nvidia/foo/lib/libfoo_extra.so.8": b"\x7fELF only in cu12",
}


def add_wheels(world) -> None:
    add, wheels = world.pypi.add, world.wheels
    add(build_wheel(wheels, "nvidia-foo-cu11", "1.0", files=CU11))
    add(build_wheel(wheels, "nvidia-foo-cu12", "2.0", files=CU12))
    add(
        build_wheel(
            wheels,
            "nvidia-bar-cu12",
            "1.0",
            files={"nvidia/__init__.py": b"", "nvidia/bar/__init__.py": b""},
        )
    )
    add(
        build_wheel(
            wheels,
            "otherlib",
            "1.0",
            files={"otherlib/__init__.py": b"V = 1\n", "otherlib/old.py": b""},
        )
    )
    add(build_wheel(wheels, "otherlib", "2.0", files={"otherlib/__init__.py": b"V = 2\n"}))
    add(
        build_wheel(
            wheels,
            "gpulib",
            "1.0",
            files={"gpulib/__init__.py": b"", "gpulib/libgpu.so.1": b"\x7fELF" + b"g" * 4000},
        )
    )
    add(
        build_wheel(
            wheels,
            "brokenpkg",
            "1.0",
            files={
                "brokenpkg/__init__.py": (
                    b"raise ImportError('libmissing.so.3: cannot open shared object file')\n"
                )
            },
        )
    )


def make_project(world, root: Path, pip: list[str]) -> Path:
    add_wheels(world)
    return world.locked(root, cuda="12.1", pip=pip)


@pytest.fixture
def family(world, tmp_path, venv) -> tuple[Path, Path]:
    """A venv on the cu11 family (plus a cu12 package that stays, and an old otherlib); the lock
    switches the family and upgrades otherlib."""
    project = make_project(
        world,
        tmp_path / "project",
        ["nvidia-foo-cu12==2.0", "nvidia-bar-cu12==1.0", "otherlib==2.0"],
    )
    pip_install(
        venv, world.pypi.url, "nvidia-foo-cu11==1.0", "nvidia-bar-cu12==1.0", "otherlib==1.0"
    )
    return project, venv


def run(lg, project: Path, *args: str):
    return lg(*args[:1], "--intent", str(project / "lockguard.toml"), *args[1:])


def check_env(lg, project: Path, venv: Path, *args: str):
    result = run(lg, project, "check", "--env", str(venv), "--format", "json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)["data"]["findings"]


def lockguard_process(
    project: Path, venv: Path, *args: str, faults=()
) -> subprocess.CompletedProcess:
    """A command in a child process, faults injected through the tests' seam
    (tests/support/fault_plugin)."""
    from tests.support.faults import fault_env

    return subprocess.run(
        [
            sys.executable,
            "-m",
            "lockguard",
            *args[:1],
            "--intent",
            str(project / "lockguard.toml"),
            "--prefix",
            str(venv),
            *args[1:],
        ],
        env=fault_env(*faults, base={**os.environ, **PIP_ENV}),
        capture_output=True,
        text=True,
        timeout=300,
    )


# killed once the engine has installed the packages, before the run records what it added
KILLED_AFTER_PIP = {
    "target": "lockguard.io.env.engines.registry:run_engine",
    "action": "exit",
    "when": "after",
    "code": 137,
}


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_cuda_family_switch_is_one_transaction_and_restore_undoes_all_of_it(family, lg, installer):
    project, venv = family
    site = site_packages(venv)
    shared = site / "nvidia" / "foo" / "lib" / "libfoo.so.8"
    assert shared.read_bytes() == CU11["nvidia/foo/lib/libfoo.so.8"]
    before = tree_hashes(venv)
    plan = json.loads(
        run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run", "--json").stdout
    )["data"]["plan"]
    reasons = {o["name"]: o["reason"] for o in plan["outgoing"]}
    assert reasons == {
        "nvidia-foo-cu11": "CUDA family switch: the lock has nvidia-foo-cu12 2.0",
        "otherlib": "upgrade to 2.0",
    }
    assert sorted(plan["install"]) == ["nvidia-foo-cu12==2.0", "otherlib==2.0"]

    result = run(
        lg, project, "clean-install", "--prefix", str(venv), "--yes", "--installer", installer
    )
    assert result.exit_code == 0, result.stderr
    assert "Uninstalling" not in result.output  # pip removed nothing: lockguard had moved it all
    # the shared path holds the new bytes
    assert shared.read_bytes() == CU12["nvidia/foo/lib/libfoo.so.8"]
    assert (site / "nvidia" / "foo" / "__init__.py").read_bytes() == CU12["nvidia/foo/__init__.py"]
    assert not (site / "nvidia" / "foo" / "include").exists()  # cu11's header went, its folder too
    assert (
        not list(site.glob("nvidia_foo_cu11-*.dist-info"))
        and not (site / "otherlib" / "old.py").exists()
    )
    # the cu12 package that stayed keeps its files
    assert (site / "nvidia" / "bar" / "__init__.py").exists()
    assert check_env(lg, project, venv, "--verify-files") == (0, [])
    assert "imported nvidia, otherlib" in result.stderr  # the smoke ran in the target interpreter

    (entry,) = json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]
    assert entry["state"] == "complete"
    assert sorted(entry["removed"]) == ["nvidia-foo-cu11 1.0", "otherlib 1.0"]
    assert sorted(entry["installed"]) == ["nvidia-foo-cu12==2.0", "otherlib==2.0"]
    quarantined = venv / ".lockguard" / "quarantine" / entry["id"] / "files"
    # the old .dist-info is kept
    assert list(quarantined.rglob("nvidia_foo_cu11-1.0.dist-info/RECORD"))
    # hard links dropped
    assert not (venv / ".lockguard" / "quarantine" / entry["id"] / "shadow").exists()
    # bar's nvidia/__init__.py, and its .pyc which pip compiles anew (uv compiles nothing)
    over = ["__init__.py"] + (
        [f"__pycache__/__init__.{ENV_CACHE_TAG}.pyc"] if installer == "pip" else []
    )
    assert (
        f"{installer} wrote over {len(over)} file{'s' if len(over) > 1 else ''} that staying "
        "packages share"
    ) in result.stderr
    manifest = json.loads(
        (venv / ".lockguard" / "quarantine" / entry["id"] / "manifest.json").read_text()
    )
    adopted = [e for e in manifest["entries"] if "site-packages/nvidia/__" in e["path"]]
    assert sorted(e["path"].split("nvidia/")[1] for e in adopted) == over
    assert {e["owner"] for e in adopted} == {"nvidia-bar-cu12"}
    text = lg("restore", "--list", "--prefix", str(venv))
    assert "nvidia-foo-cu11 1.0" in text.stdout and "nvidia-foo-cu12==2.0" in text.stdout

    restored = lg("restore", "--prefix", str(venv))
    assert restored.exit_code == 0, restored.stderr
    assert tree_hashes(venv) == before  # pip's part undone too: paths, bytes, modes, folders
    assert shared.read_bytes() == CU11["nvidia/foo/lib/libfoo.so.8"]


def test_a_kill_during_pip_is_undone_by_restore_or_the_next_clean_install(family, lg):
    project, venv = family
    before = tree_hashes(venv)
    killed = lockguard_process(project, venv, "clean-install", "--yes", faults=[KILLED_AFTER_PIP])
    assert killed.returncode == 137, killed.stderr
    assert tree_hashes(venv) != before  # half changed: quarantined, pip part-way
    (entry,) = json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]
    assert entry["state"] == "incomplete" and entry["phase"] == "pip-start"
    code, findings = check_env(lg, project, venv)
    assert code == 1 and any(f["code"] == "LG222" and entry["id"] in f["message"] for f in findings)

    half = tree_hashes(venv)
    dry = run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run")
    # a dry run changes nothing, not even to undo the interrupted run
    assert tree_hashes(venv) == half
    assert (
        dry.exit_code == 1
        and f"clean-install {entry['id']}" in dry.stdout
        and "was interrupted" in dry.stdout
    )
    assert "put back" in dry.stdout and "would remove" in dry.stdout

    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before

    killed = lockguard_process(project, venv, "clean-install", "--yes", faults=[KILLED_AFTER_PIP])
    assert killed.returncode == 137
    result = run(lg, project, "clean-install", "--prefix", str(venv), "--yes")
    assert result.exit_code == 0, result.stderr
    assert "was interrupted; undone" in result.stderr
    assert check_env(lg, project, venv, "--verify-files") == (0, [])


def test_a_deleted_shared_library_is_found_and_reinstalled(world, lg, tmp_path, venv):
    project = make_project(world, tmp_path / "project", ["gpulib==1.0", "otherlib==2.0"])
    assert run(lg, project, "clean-install", "--prefix", str(venv), "--yes").exit_code == 0
    library = site_packages(venv) / "gpulib" / "libgpu.so.1"
    library.unlink()
    code, findings = check_env(lg, project, venv)  # by default, no --verify-files needed
    assert code == 1 and [f["code"] for f in findings] == ["LG204"]
    assert "gpulib 1.0" in findings[0]["message"] and "gpulib/libgpu.so.1" in findings[0]["message"]
    assert "reinstalls gpulib==1.0" in findings[0]["hint"]
    plan = json.loads(
        run(lg, project, "clean-install", "--prefix", str(venv), "--dry-run", "--json").stdout
    )["data"]["plan"]
    assert (
        plan["install"] == ["gpulib==1.0"]
        and plan["outgoing"][0]["reason"] == "repair: 1 file missing"
    )
    result = run(lg, project, "clean-install", "--prefix", str(venv), "--yes")
    assert result.exit_code == 0, result.stderr
    assert library.exists() and check_env(lg, project, venv, "--verify-files") == (0, [])

    library.write_bytes(b"\x7fELF truncated")  # a cut-short copy: same name, other size
    code, findings = check_env(lg, project, venv)
    assert code == 1 and "differ in size" in findings[0]["message"]


def test_an_import_smoke_that_fails_rolls_back_with_exit_5(world, lg, tmp_path, venv):
    project = make_project(world, tmp_path / "project", ["brokenpkg==1.0", "otherlib==2.0"])
    pip_install(venv, world.pypi.url, "otherlib==1.0")
    before = tree_hashes(venv)
    result = run(lg, project, "clean-install", "--prefix", str(venv), "--yes")
    assert result.exit_code == 5, result.stderr
    assert 'python -I -c "import brokenpkg"' in result.stderr
    # the import's stderr tail
    assert "libmissing.so.3: cannot open shared object file" in result.stderr
    assert (
        "rolled back: removed" in result.stderr
        and "Traceback (most recent" not in result.stderr.split("lockguard")[0]
    )
    assert tree_hashes(venv) == before
    (entry,) = json.loads(lg("restore", "--list", "--prefix", str(venv), "--json").stdout)["data"]
    assert entry["state"] == "aborted"


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_verify_files_accepts_the_pyc_pip_compiles_over_a_shipped_one(
    world, lg, tmp_path, venv, installer
):
    tag = ENV_CACHE_TAG  # what the venv's interpreter compiles
    world.pypi.add(
        build_wheel(
            world.wheels,
            "shipspyc",
            "1.0",
            files={
                "shipspyc/__init__.py": b"",
                "shipspyc/conv_template.py": b"X = 1\n",
                f"shipspyc/__pycache__/conv_template.{tag}.pyc": (
                    b"a pyc from the wheel builder's machine"
                ),
            },
        )
    )
    project = make_project(world, tmp_path / "project", ["shipspyc==1.0"])
    installed = run(
        lg, project, "clean-install", "--prefix", str(venv), "--yes", "--installer", installer
    )
    assert installed.exit_code == 0
    assert "verified: every RECORD file of the 1 locked distribution is present" in installed.stderr
    compiled = site_packages(venv) / "shipspyc" / "__pycache__" / f"conv_template.{tag}.pyc"
    # pip compiled over it; uv compiles nothing and leaves the wheel's own
    shipped = compiled.read_bytes() == b"a pyc from the wheel builder's machine"
    assert shipped == (installer == "uv")
    assert check_env(lg, project, venv, "--verify-files") == (0, [])


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_progress_lines_without_a_terminal_and_only_the_summary_with_json(family, lg, installer):
    project, venv = family
    dry_json = run(lg, project, "clean-install", "--prefix", str(venv), "--json", "--yes")
    # --json: the summary on stdout, nothing else
    assert dry_json.exit_code == 0 and dry_json.stderr == ""
    data = json.loads(dry_json.stdout)["data"]
    assert data["applied"] and sorted(data["installed"]) == [
        "nvidia-foo-cu12==2.0",
        "otherlib==2.0",
    ]
    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    plain = run(
        lg, project, "clean-install", "--prefix", str(venv), "--yes", "--installer", installer
    )
    lines = plain.stderr.splitlines()
    # lockguard downloaded the locked files in the --json run; the engine gets them from its cache
    assert (
        "2 locked files ready (2.41 KB; downloaded 0, 2 from lockguard's cache or the lock's own "
        "paths)" in lines
    ), lines
    assert "installing 2 packages with " + installer in lines
    assert any(line.startswith("installed nvidia-foo-cu12 2.0 (") for line in lines)
    assert f"installed 2 packages with {installer}" in lines and any(
        line.startswith("verified:") for line in lines
    )
    again = run(lg, project, "clean-install", "--prefix", str(venv), "--yes")
    # a re-run that changes nothing: 0
    assert again.exit_code == 0 and "nothing to change" in again.stdout


WHEEL_BACKEND = """\
import base64, hashlib, zipfile

FILES = {"fromsdist/__init__.py": b"BUILT = True\\n",
         "fromsdist-1.0.dist-info/METADATA":
             b"Metadata-Version: 2.1\\nName: fromsdist\\nVersion: 1.0\\n",
         "fromsdist-1.0.dist-info/WHEEL":
             b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "fromsdist-1.0-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel_directory + "/" + name, "w") as archive:
        for path, data in FILES.items():
            archive.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{path},sha256={digest},{len(data)}")
        record = "\\n".join(rows + ["fromsdist-1.0.dist-info/RECORD,,"]) + "\\n"
        archive.writestr("fromsdist-1.0.dist-info/RECORD", record)
    return name
"""


def test_an_sdist_only_package_is_built_by_pip_and_verified(world, lg, tmp_path, venv):
    from tests.support.wheels import build_sdist
    from tests.support.world import IN_TREE_PYPROJECT

    world.pypi.add(
        build_sdist(
            world.wheels,
            "fromsdist",
            "1.0",
            metadata_version="2.2",
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": WHEEL_BACKEND},
        )
    )
    project = make_project(world, tmp_path / "project", ["fromsdist==1.0", "otherlib==2.0"])
    result = run(lg, project, "clean-install", "--prefix", str(venv), "--yes")
    assert result.exit_code == 0, result.stderr
    assert "imported fromsdist, otherlib" in result.stderr
    assert check_env(lg, project, venv, "--verify-files") == (0, [])
