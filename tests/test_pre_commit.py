"""The real pre-commit runs `.pre-commit-hooks.yaml` through `pre-commit try-repo`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.conda_channel import build_channel
from tests.support.locked import edit, make_locked_project


def wheelhouse() -> Path | None:
    """Wheels of lockguard's dependencies, so pre-commit can install the hook without a network.
    The README's test command builds it (`pip wheel -w .wheelhouse .`)."""
    configured = os.environ.get("LOCKGUARD_WHEELHOUSE")
    folder = Path(configured) if configured else REPO / ".wheelhouse"
    return folder if folder.is_dir() and any(folder.glob("*.whl")) else None


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )


def test_lockguard_check_hook_passes_then_fails_after_a_hand_edit(tmp_path, world):
    wheels = wheelhouse()
    if wheels is None:
        pytest.skip(
            "no .wheelhouse: run the README's test command (it builds one) "
            "or set LOCKGUARD_WHEELHOUSE"
        )
    channel = build_channel(tmp_path / "conda")
    template = make_locked_project(tmp_path / "t", world, channel)
    project = tmp_path / "repo"
    shutil.copytree(template, project)
    git("init", "-q", cwd=project)
    git("add", ".", cwd=project)
    git("commit", "-q", "-m", "lock", cwd=project)
    env = {
        **os.environ,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PRE_COMMIT_HOME": str(tmp_path / "pc"),
        "PIP_CONFIG_FILE": os.devnull,
        "VIRTUALENV_NO_DOWNLOAD": "1",
    }
    pre_commit = [
        sys.executable,
        "-m",
        "pre_commit",
        "try-repo",
        str(REPO),
        "lockguard-check",
        "--all-files",
    ]
    first = subprocess.run(
        pre_commit, cwd=project, env=env, capture_output=True, text=True, timeout=900
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "lockguard check" in first.stdout and "Passed" in first.stdout
    edit(project / "requirements.lock", "jinja2==1.0", "jinja2==1.1")
    second = subprocess.run(
        pre_commit, cwd=project, env=env, capture_output=True, text=True, timeout=900
    )
    assert second.returncode == 1, second.stdout + second.stderr
    assert (
        "Failed" in second.stdout and "LG102" in second.stdout and "edited by hand" in second.stdout
    )
