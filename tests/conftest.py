from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.index_server import LocalIndex

REPO = Path(__file__).resolve().parents[1]
REFERENCE_METADATA = Path(__file__).resolve().parent / "data" / "metadata"


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


_SESSION_ROOT: Path | None = None


def pytest_configure(config):
    """One cache folder and one Ray temp folder per test session (per xdist worker), set before any
    fixture of any scope runs: a module- or session-scoped fixture never sees the user's cache."""
    global _SESSION_ROOT
    _SESSION_ROOT = Path(tempfile.mkdtemp(prefix="lg-tests-"))
    os.environ["LOCKGUARD_CACHE_DIR"] = str(_SESSION_ROOT / "cache")
    os.environ["XDG_CACHE_HOME"] = str(_SESSION_ROOT / "xdg-cache")
    # clean-install's uv engine: a cache of the session's own, never the developer's uv cache
    os.environ["UV_CACHE_DIR"] = str(_SESSION_ROOT / "uv-cache")
    os.environ["RAY_TMPDIR"] = str(_SESSION_ROOT / "ray")  # Ray's sockets: a short path of our own


def pytest_unconfigure(config):
    if _SESSION_ROOT is not None:
        shutil.rmtree(_SESSION_ROOT, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def _module_cache(tmp_path_factory):
    """A module's fixtures (check templates, fuzz worlds) get a cache folder of their own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path_factory.mktemp("module-cache")))
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """No test sees the developer's cache, colours or GPU overrides."""
    for name in (
        "LOCKGUARD_CUDA_DRIVER",
        "LOCKGUARD_GPU_ARCH",
        "LOCKGUARD_CONSTRAINTS",
        "FORCE_COLOR",
        "GITHUB_WORKSPACE",  # --format github places files against it
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("LOCKGUARD_HTTP_BACKOFF", "0.05")  # retries stay real, waits stay short
    # init never asks conda-forge whether it answers (tests/test_init.py probes a local URL)
    monkeypatch.setenv("LOCKGUARD_CHANNEL_PROBE", "0")


@pytest.fixture
def lg(capsys):
    """Run the lockguard CLI in-process: lg("check", "--format", "json") -> Result."""
    from lockguard.cli.boundary import run

    def invoke(*args: str) -> Result:
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


@pytest.fixture
def lg_process():
    """Run the installed console entry point in a real subprocess (for tracebacks, exit codes)."""

    def invoke(*args: str, cwd: Path | None = None, env: dict | None = None) -> Result:
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, "-m", "lockguard", *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return invoke


@pytest.fixture
def local_index(tmp_path):
    index = LocalIndex(tmp_path / "index").start()
    yield index
    index.stop()


@pytest.fixture
def world(tmp_path):
    """A mini PyPI and a mini PyTorch index (serving /cu118) with real-shaped wheels."""
    from tests.support.world import running_world

    with running_world(tmp_path) as world:
        yield world


@pytest.fixture(scope="module")
def venv_template(tmp_path_factory) -> Path:
    """An empty venv made once per test module (tests/support/envs.py); `venv` copies it."""
    from tests.support.envs import make_venv

    return make_venv(tmp_path_factory.mktemp("venvs") / "template")


@pytest.fixture
def venv(venv_template, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the module's venv, with pip configured only by the test (no user config,
    no cache) and no LD_LIBRARY_PATH from the machine."""
    from tests.support.envs import PIP_ENV, copy_venv

    for key, value in PIP_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    return copy_venv(venv_template, tmp_path / "env")
