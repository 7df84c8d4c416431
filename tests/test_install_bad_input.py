"""Bad and hostile input to clean-install, restore and check --env: a prefix that is no
environment, a relative --python, interpreters that print garbage or never exit, damaged conda
records and quarantine state, RECORD/METADATA/.pth files that are FIFOs or huge. Each ends with
exit 2 and a message naming the file: no traceback, no hang, nothing changed. Also the loader-path
and kept-tool findings (LG217 by SONAME, LG221)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from tests.support.envs import (
    compile_library,
    pip_install,
    site_packages,
    tree_hashes,
)
from tests.support.wheels import build_wheel


@pytest.fixture
def project(world, tmp_path) -> Path:
    return world.locked(
        tmp_path / "project", cuda="12.1", pip=["jinja2", "nvidia-nccl-cu12==2.18.1"]
    )


def intent(project: Path) -> list[str]:
    return ["--intent", str(project / "lockguard.toml")]


def with_state(venv: Path) -> dict:
    """The whole tree, the state folder included, but the prefix's lock file (.lockguard/lock,
    created empty by whoever first locks the prefix: the kernel's lock needs a file)."""
    hashes = tree_hashes(venv, skip="")
    hashes.pop(".lockguard/lock", None)
    return hashes


def clear_error(result, *names: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.output and "internal error" not in result.output
    for name in names:
        assert name in result.stderr, (name, result.stderr)


@pytest.mark.parametrize("target", ["/", "/usr", "/etc"])
def test_a_prefix_must_be_an_environment(project, lg, target):
    result = lg("clean-install", *intent(project), "--prefix", target, "--dry-run")
    clear_error(result, "is not an environment", "pyvenv.cfg", "conda-meta")


def test_a_base_interpreter_is_refused_too(project, lg, tmp_path):
    # the tests' interpreter; its prefix is no venv of ours
    base = Path(os.path.realpath(os.sys.executable))
    result = lg("clean-install", *intent(project), "--python", str(base), "--dry-run")
    if (Path(os.sys.base_prefix) / "pyvenv.cfg").exists():
        pytest.skip("the base interpreter lives in a venv here")
    clear_error(result, "is not an environment", "sys.prefix")


def test_a_relative_python_is_a_path_not_a_name_on_path(project, venv, lg, monkeypatch):
    monkeypatch.chdir(venv / "bin")
    result = lg("clean-install", *intent(project), "--python", "./python3", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)["data"]["plan"]
    assert plan["prefix"] == os.path.realpath(venv)  # the environment named, not the python on PATH


def fake_env(root: Path, python_script: str) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /nowhere\n")
    python = root / "bin" / "python"
    python.write_text("#!/bin/sh\n" + python_script)
    python.chmod(0o755)
    return root


@pytest.mark.parametrize(
    "script, words",
    [
        ("echo 'hello, I am not python'\n", "not a Python"),
        ("echo 'LOCKGUARD-FACTS:[1, 2, 3]'\n", "not a Python"),
        ('echo \'LOCKGUARD-FACTS:{"prefix": "/x", "path": ["/x"\'\n', "not a Python"),
        ('echo \'LOCKGUARD-FACTS:{"prefix": 5, "path": []}\'\n', "not a Python"),
        ("echo broken >&2; exit 3\n", "failed to report its sys.path (exit 3)"),
        ("yes 'flood'\n", "more than 4 MiB"),
    ],
)
def test_an_environment_python_that_misbehaves_is_bad_input(project, lg, tmp_path, script, words):
    env = fake_env(tmp_path / "fake", script)
    for args in (
        ["clean-install", *intent(project), "--prefix", str(env), "--dry-run"],
        ["check", *intent(project), "--env", str(env)],
    ):
        clear_error(lg(*args), str(env / "bin" / "python"), words)


def test_an_environment_python_that_never_exits_is_stopped_with_its_children(
    project, lg, tmp_path, monkeypatch
):
    children = tmp_path / "children"
    env = fake_env(tmp_path / "fake", f"sleep 300 &\necho $! > {children}\nsleep 300\n")
    monkeypatch.setenv("LOCKGUARD_INTERPRETER_TIMEOUT", "2")
    started = time.monotonic()
    result = lg("clean-install", *intent(project), "--prefix", str(env), "--dry-run")
    clear_error(result, "did not answer within 2 s", "stopped")
    assert time.monotonic() - started < 60
    pid = int(children.read_text())
    for _ in range(50):  # SIGKILL is asynchronous; the child is gone within moments
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the interpreter's child {pid} is still running")


@pytest.mark.parametrize(
    "record",
    [
        "[1, 2]",
        '"name"',
        '{"name": 5}',
        '{"name": "x", "files": "a-string"}',
        '{"name": "x", "files": [1, 2]}',
        '{"name": "x"',
        "null",
    ],
)
def test_conda_records_of_the_wrong_shape_are_bad_input(project, lg, tmp_path, record):
    prefix = tmp_path / "conda-env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "x-1.0-0.json").write_text(record)
    clear_error(lg("check", *intent(project), "--env", str(prefix)), "conda-meta/x-1.0-0.json")


@pytest.mark.parametrize(
    "manifest, journal",
    [
        ("[]", '{"event": "begin"}\n'),
        ('{"entries": "nope"}', '{"event": "begin"}\n'),
        ('{"entries": [{"path": 5}]}', '{"event": "begin"}\n'),
        (
            '{"entries": [{"path": "a", "mode": "rw", "owner": "x", "reason": "y"}]}',
            '{"event": "begin"}\n',
        ),
        ('{"entries": []', '{"event": "begin"}\n'),
        ('{"entries": []}', '[1]\n{"event": "begin"}\n'),
        ('{"entries": []}', 'garbage\n{"event": "begin"}\n'),
        ('{"entries": []}', '{"event": "moved", "path": 7}\n{"event": "done"}\n'),
    ],
)
def test_quarantine_state_of_the_wrong_shape_is_bad_input(project, venv, lg, manifest, journal):
    folder = venv / ".lockguard" / "quarantine" / "20240101-000000-000000-aa"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(manifest)
    (folder / "journal.jsonl").write_text(journal)
    before = tree_hashes(venv)
    for args in (
        ["restore", "--list", "--prefix", str(venv)],
        ["restore", "--prefix", str(venv)],
        ["clean-install", *intent(project), "--prefix", str(venv), "--yes"],
        ["check", *intent(project), "--env", str(venv)],
    ):
        result = lg(*args)
        clear_error(result, "20240101-000000-000000-aa")
        assert "quarantine folder is damaged" in result.stderr
    assert tree_hashes(venv) == before


@pytest.mark.parametrize("name", ["RECORD", "METADATA", "pth"])
def test_a_fifo_where_a_file_should_be_is_bad_input_not_a_hang(project, venv, lg_process, name):
    site = site_packages(venv)
    info = site / "fifo_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fifo-pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("fifo_pkg-1.0.dist-info/METADATA,,\n")
    target = site / "zz-fifo.pth" if name == "pth" else info / name
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    # a hang would time out (120 s)
    result = lg_process("check", *intent(project), "--env", str(venv))
    clear_error(result, str(target), "a FIFO, not a regular file")


def test_a_huge_record_or_pth_is_bad_input(project, venv, lg):
    site = site_packages(venv)
    info = site / "huge_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: huge-pkg\nVersion: 1.0\n" + "x" * (2 << 20)
    )
    with open(info / "RECORD", "wb") as handle:
        handle.truncate(65 << 20)  # sparse: 65 MiB of nothing
    clear_error(
        lg("check", *intent(project), "--env", str(venv)), str(info / "RECORD"), "more than"
    )
    # a long METADATA is fine: headers only
    (info / "RECORD").write_text("huge_pkg-1.0.dist-info/METADATA,,\n")
    with open(site / "zz-huge.pth", "wb") as handle:
        handle.truncate(2 << 20)
    clear_error(lg("check", *intent(project), "--env", str(venv)), "zz-huge.pth", "more than")


def test_loader_path_libraries_are_compared_by_soname(world, venv, lg, tmp_path, monkeypatch):
    project = world.locked(tmp_path / "torch-project", cuda="12.1", pip=["torch==2.1.0"])
    shadow = tmp_path / "cuda-13"
    if compile_library(shadow, "libcudart.so.13", "libcudart.so.13") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(shadow))
    result = lg("check", *intent(project), "--env", str(venv), "--format", "json")
    codes = {f["code"] for f in json.loads(result.stdout)["data"]["findings"]}
    assert "LG217" not in codes  # libcudart.so.13 is never loaded for libcudart.so.12
    compile_library(shadow, "libcudart.so.12.4.127", "libcudart.so.12")
    result = lg("check", *intent(project), "--env", str(venv), "--format", "json")
    shadows = [f for f in json.loads(result.stdout)["data"]["findings"] if f["code"] == "LG217"]
    assert len(shadows) == 1 and "libcudart.so.12.4.127" in shadows[0]["message"]
    assert "SONAME libcudart.so.12" in shadows[0]["message"]


def test_a_kept_tool_that_needs_another_locked_version_is_reported_with_the_fix(
    world, venv, lg, tmp_path
):
    world.pypi.add(build_wheel(world.wheels, "packaging", "23.2"))
    world.pypi.add(build_wheel(world.wheels, "wheel", "0.48.0", requires=["packaging>=24.0"]))
    pip_install(venv, world.pypi.url, "--no-deps", "wheel==0.48.0")
    project = world.locked(tmp_path / "project", cuda="12.1", pip=["packaging==23.2"])
    applied = lg("clean-install", *intent(project), "--prefix", str(venv), "--yes")
    assert applied.exit_code == 0, applied.stderr  # the lock is applied; the conflict is a warning
    assert (
        "warning: LG221 wheel 0.48.0 is kept" in applied.stderr
        and "packaging>=24.0" in applied.stderr
    )
    result = lg("check", *intent(project), "--env", str(venv), "--format", "json")
    (finding,) = [f for f in json.loads(result.stdout)["data"]["findings"] if f["code"] == "LG221"]
    assert "the lock pins packaging 23.2" in finding["message"]
    assert "add `wheel` to the intent's pip list" in finding["hint"]
    strict = lg("clean-install", *intent(project), "--prefix", str(venv), "--yes", "--strict")
    assert strict.exit_code == 1


def test_a_quarantined_files_mode_survives_the_round_trip(project, venv, lg):
    assert lg("clean-install", *intent(project), "--prefix", str(venv), "--yes").exit_code == 0
    site = site_packages(venv)
    stray = site / "libstray.so.1"
    stray.write_bytes(b"\x7fELF stray")
    stray.chmod(0o640)
    before = tree_hashes(venv)
    assert lg("clean-install", *intent(project), "--prefix", str(venv), "--yes").exit_code == 0
    assert not stray.exists()
    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before and stat.S_IMODE(stray.stat().st_mode) == 0o640


# -- found by the environment fuzz family (tests/support/fuzz_env.py) ----------------------------

DEEP = "[" * 100_000  # deep enough to exhaust json's recursion: RecursionError, not ValueError


@pytest.mark.parametrize("where", ["interpreter", "conda-record"])
def test_json_nested_past_the_recursion_limit_is_bad_input(project, lg, tmp_path, where):
    env = tmp_path / "env"
    if where == "interpreter":
        fake_env(env, f"echo 'LOCKGUARD-FACTS:{DEEP}'\n")
        named = str(env / "bin" / "python")
    else:
        (env / "conda-meta").mkdir(parents=True)
        (env / "conda-meta" / "x-1.0-0.json").write_text(DEEP)
        named = "conda-meta/x-1.0-0.json"
    clear_error(lg("check", *intent(project), "--env", str(env)), named)


@pytest.mark.parametrize(
    "manifest, journal",
    [
        (DEEP, '{"event": "begin"}\n'),
        ('{"entries": []}', DEEP + '\n{"event": "begin"}\n'),
        (b'{"entries": [], "id": "\xff"}', '{"event": "begin"}\n'),
        ('{"entries": []}', b'{"event": "\xfe"}\n{"event": "begin"}\n'),
        (
            (
                '{"entries": [{"path": "../../x", "sha256": null, "mode": 420, '
                '"symlink": null, "owner": "x", "reason": "y"}]}'
            ),
            '{"event": "begin"}\n',
        ),
        (
            (
                '{"entries": [{"path": "a", "sha256": null, "mode": 1180591620717411303424, '
                '"symlink": null, "owner": "x", '
                '"reason": "y"}]}'
            ),
            '{"event": "begin"}\n',
        ),
        ('{"entries": []}', '{"event": "begin"}\n{"event": "moved", "path": "/etc/hostname"}\n'),
        (
            '{"entries": []}',
            '{"event": "begin"}\n{"event": "rmdir", "path": ".lockguard/x", "mode": 493}\n',
        ),
    ],
)
def test_quarantine_state_that_is_deep_not_utf8_or_points_out_is_bad_input(
    project, venv, lg, manifest, journal
):
    folder = venv / ".lockguard" / "quarantine" / "20240101-000000-000000-aa"
    folder.mkdir(parents=True)
    for name, data in (("manifest.json", manifest), ("journal.jsonl", journal)):
        (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    before = with_state(venv)
    for args in (
        ["restore", "--list", "--prefix", str(venv)],
        ["restore", "--prefix", str(venv)],
        ["check", *intent(project), "--env", str(venv)],
    ):
        result = lg(*args)
        clear_error(result, "20240101-000000-000000-aa")
        assert "quarantine folder is damaged" in result.stderr
    assert with_state(venv) == before  # the journal included: a refused restore writes nothing


def test_a_refused_restore_through_a_link_out_of_the_prefix_changes_nothing(venv, lg, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("outside\n")
    (venv / "out").symlink_to(outside)
    folder = venv / ".lockguard" / "quarantine" / "20240101-000000-000000-aa"
    (folder / "files" / "out").mkdir(parents=True)
    (folder / "files" / "out" / "x.txt").write_text("quarantined\n")
    entry = (
        '{"path": "out/x.txt", "sha256": null, "mode": 420, "symlink": null, '
        '"owner": "x", "reason": "y"}'
    )
    (folder / "manifest.json").write_text('{"entries": [' + entry + "]}")
    (folder / "journal.jsonl").write_text(
        '{"event": "begin"}\n{"event": "moved", "path": "out/x.txt"}\n'
    )
    before, outside_before = with_state(venv), tree_hashes(outside)
    result = lg("restore", "--prefix", str(venv))
    clear_error(result, "20240101-000000-000000-aa", "a link out of the prefix")
    assert with_state(venv) == before and tree_hashes(outside) == outside_before


def test_a_conda_record_that_is_not_utf8_is_bad_input(project, lg, tmp_path):
    prefix = tmp_path / "conda-env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "x-1.0-0.json").write_bytes(b'{"name": "\xff\xfe"}')
    clear_error(
        lg("check", *intent(project), "--env", str(prefix)), "conda-meta/x-1.0-0.json", "UTF-8"
    )


@pytest.mark.parametrize("target", ["/", "/usr", "empty-folder", "fifo"])
def test_check_env_and_restore_need_an_environment(project, lg, tmp_path, target):
    if target == "empty-folder":
        target = tmp_path / "empty"
        target.mkdir()
    elif target == "fifo":
        target = tmp_path / "fifo"
        os.mkfifo(target)
    for args in (
        ["check", *intent(project), "--env", str(target)],
        ["restore", "--list", "--prefix", str(target)],
        ["restore", "--prefix", str(target)],
    ):
        clear_error(lg(*args), str(target), "is not an environment")


def test_a_file_name_that_is_not_utf8_is_shown_escaped(project, venv, lg_process):
    info = os.path.join(os.fsencode(site_packages(venv)), b"x\xff-1.0.dist-info")
    os.mkdir(info)
    with open(os.path.join(info, b"METADATA"), "wb") as handle:
        handle.write(b"Metadata-Version: 2.1\nName: x\nVersion: 1.0\n")
    result = lg_process("check", *intent(project), "--env", str(venv))
    assert result.exit_code == 1, result.stderr
    assert "internal error" not in result.stderr and "x\\udcff-1.0.dist-info" in result.stdout


def test_a_broken_interpreter_is_named_before_what_its_site_packages_hold(project, lg, tmp_path):
    """The site-packages are read while the interpreter is asked; its failure still comes first."""
    env = fake_env(tmp_path / "fake", "echo 'hello, I am not python'\n")
    info = env / "lib" / "python3.11" / "site-packages" / "fifo_pkg-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fifo-pkg\nVersion: 1.0\n")
    os.mkfifo(info / "RECORD")
    result = lg("check", *intent(project), "--env", str(env))
    clear_error(result, str(env / "bin" / "python"), "not a Python")
    assert "FIFO" not in result.stderr


def test_site_packages_read_early_are_the_ones_the_interpreter_names(project, venv, lg, tmp_path):
    """A folder shaped like site-packages that the interpreter does not use is never reported."""
    stray = venv / "lib" / "python3.0" / "site-packages" / "ghost-1.0.dist-info"
    stray.mkdir(parents=True)
    (stray / "METADATA").write_text("Metadata-Version: 2.1\nName: ghost\nVersion: 1.0\n")
    os.mkfifo(stray / "RECORD")  # read early; an error only if the interpreter used this folder
    result = lg("check", *intent(project), "--env", str(venv), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    names = {f["message"] for f in json.loads(result.stdout)["data"]["findings"]}
    assert not any("ghost" in n for n in names), names


def test_a_record_the_csv_module_refuses_is_bad_input_naming_its_line(project, venv, lg):
    """Issue 25: a RECORD field over the csv module's 131,072 characters was exit 70."""
    dist_info = site_packages(venv) / "odd-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: odd\nVersion: 1.0\n")
    field = '"' + "x" * 200_000 + '"'
    (dist_info / "RECORD").write_text(
        f'odd-1.0.dist-info/METADATA,,\n"odd/__init__.py",,\n{field},,\n'
    )
    before = with_state(venv)
    before.pop(".lockguard/", None)  # the state folder that holds the prefix's lock may appear
    for args in (
        ["check", *intent(project), "--env", str(venv)],
        ["clean-install", *intent(project), "--prefix", str(venv), "--dry-run"],
    ):
        result = lg(*args)
        clear_error(
            result, f"{dist_info / 'RECORD'}:3: this RECORD cannot be read", "--force-reinstall"
        )
    after = with_state(venv)
    after.pop(".lockguard/", None)
    assert after == before
