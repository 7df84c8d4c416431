"""The interpreter doctor diagnoses (issue 30): one it cannot run is bad input (exit 2) naming the
path and the cause, never exit 70 and never silently another interpreter. An active environment
($VIRTUAL_ENV, $CONDA_PREFIX) whose python is a symlink loop, missing, or behind a folder the user
cannot enter is refused, naming the variable. check --env/--python and clean-install name a loop
as a loop. Child lockguard processes; a real unprivileged user where the machine allows it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.envs import ENV_PYTHON

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def loop_env(tmp_path) -> Path:
    """A venv whose bin/python and bin/python3 point at each other."""
    env = tmp_path / "loop-env"
    (env / "bin").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text(f"home = {Path(ENV_PYTHON).parent}\n")
    (env / "bin" / "python").symlink_to("python3")
    (env / "bin" / "python3").symlink_to("python")
    return env


def _refused(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert not result.stdout.strip()  # nothing diagnosed
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_virtual_env_with_a_python_loop_is_refused_naming_it(loop_env, lg_process, tmp_path):
    python = loop_env / "bin" / "python"
    result = lg_process("doctor", cwd=tmp_path, env={"VIRTUAL_ENV": str(loop_env)})
    _refused(
        result,
        f"VIRTUAL_ENV={loop_env} names the environment to diagnose, but {python} is a symlink loop",
        f"{python} -> {loop_env / 'bin' / 'python3'} -> {python}",
        "unset VIRTUAL_ENV",
    )
    as_json = lg_process("doctor", "--json", cwd=tmp_path, env={"VIRTUAL_ENV": str(loop_env)})
    assert as_json.exit_code == 2 and '"exit_code": 2' in as_json.stdout


def test_an_active_environment_without_its_python_is_refused(tmp_path, lg_process):
    gone = tmp_path / "deleted-env"
    gone.mkdir()
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        env = {"VIRTUAL_ENV": "", "CONDA_PREFIX": "", key: str(gone)}
        result = lg_process("doctor", cwd=tmp_path, env=env)
        _refused(result, f"{key}={gone}", f"{gone / 'bin' / 'python'} does not exist")


def test_python_as_a_loop_names_the_loop_in_doctor_check_and_clean_install(
    loop_env, lg_process, tmp_path
):
    python = loop_env / "bin" / "python"
    _refused(
        lg_process("doctor", "--python", str(python), cwd=tmp_path),
        f"--python {python}: {python} is a symlink loop",
    )
    project = Path(shutil.copytree(REPO / "examples" / "gpu-training", tmp_path / "project"))
    intent = ["--intent", str(project / "lockguard.toml")]
    for argv in (
        ["check", *intent, "--env", str(loop_env)],
        ["check", *intent, "--python", str(python)],
        ["clean-install", *intent, "--prefix", str(loop_env), "--dry-run"],
        ["clean-install", *intent, "--python", str(python), "--dry-run"],
    ):
        result = lg_process(*argv, cwd=tmp_path)
        assert result.exit_code == 2, (argv, result.stderr)
        assert "Too many levels of symbolic links" in result.stderr, result.stderr
        assert "a symlink loop: point the link at a real interpreter" in result.stderr
        assert "not open to this user" not in result.stderr  # the wrong cause, before


# -- an unprivileged user ---------------------------------------------------------------------


def _as_nobody() -> list[str] | None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def open_folder():
    """A folder every user may enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="lg-doctor-target-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _nobody_doctor(home: Path, *args: str, env: dict[str, str] | None = None):
    command = [*(_as_nobody() or []), sys.executable, "-m", "lockguard", "doctor", *args]
    full = {**os.environ, "HOME": str(home), "LOCKGUARD_CACHE_DIR": str(home / "cache")}
    full.update(env or {})
    return subprocess.run(command, env=full, capture_output=True, text=True, timeout=120, cwd=home)


def test_an_interpreter_behind_a_folder_the_user_cannot_enter_is_bad_input(open_folder):
    if _as_nobody() is None:
        pytest.skip("needs root and setpriv to run lockguard as an unprivileged user")
    if _nobody_doctor(open_folder, "--help").returncode != 0:
        pytest.skip("the unprivileged user cannot run the tests' interpreter here")
    private = open_folder / "private"
    private.mkdir(mode=0o700)
    shutil.copy(os.path.realpath(ENV_PYTHON), private / "python3")
    env = open_folder / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(private / "python3")  # a venv's link to its base
    for args, extra, needle in (
        (
            ["--python", str(private / "python3")],
            {},
            f"--python {private / 'python3'}: cannot run {private / 'python3'}: {private} is "
            "not open to this user",
        ),
        (
            ["--python", str(env / "bin" / "python")],
            {},
            f"cannot run {env / 'bin' / 'python'}: {private} is not open to this user",
        ),
        (
            [],
            {"VIRTUAL_ENV": str(env)},
            f"VIRTUAL_ENV={env} names the environment to diagnose, but cannot run",
        ),
    ):
        done = _nobody_doctor(open_folder, *args, env=extra)
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert needle in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
