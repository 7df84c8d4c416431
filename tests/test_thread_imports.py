"""The commands that run threads next to the main one (doctor's probe and system facts, the
environment scan's interpreter question) import nothing in those threads:
tests/support/thread_imports.py says why. The resolve's own threads are covered in
tests/test_index_pages.py."""

from __future__ import annotations

import os

import pytest

from tests.support.thread_imports import imports_by_threads


@pytest.fixture
def project_and_env(tmp_path, world, venv):
    from tests.support.world import locked_mixed_project

    return locked_mixed_project(world, tmp_path / "project"), venv


@pytest.mark.parametrize("command", ["doctor", "check --env", "clean-install --dry-run"])
def test_threaded_commands_import_nothing_in_their_threads(command, project_and_env, tmp_path):
    project, venv = project_and_env
    intent = ["--intent", str(project / "lockguard.toml")]
    argv = {
        "doctor": ["doctor", "--python", str(venv / "bin" / "python"), *intent],
        "check --env": ["check", *intent, "--env", str(venv)],
        "clean-install --dry-run": ["clean-install", *intent, "--prefix", str(venv), "--dry-run"],
    }[command]
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(tmp_path / "cache")}
    code, imported, stderr = imports_by_threads(argv, env, cwd=project)
    assert code in (0, 1), stderr  # findings are fine (the venv is not the lock); a crash is not
    assert "Traceback" not in stderr
    assert imported == [], f"{command}: modules imported by threads: {imported}"
