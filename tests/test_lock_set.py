"""A project's lock set under concurrent runs and signals (issue 22, items 2-3): resolve holds the
project's kernel lock exclusively, check holds it shared; a second run waits naming the holder,
or with --no-wait exits 2; SIGTERM/SIGINT in the middle of a commit leave the whole new set and no
temporary file; the temporary files of a killed run are removed by the next resolve.

Real lockguard processes against the local indexes; the fault seam (tests/support/fault_plugin)
stops a resolve in the middle of its commit (after the first of three files is renamed into place),
so every race here is certain, never timed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.io.project.lock_set import LockSet
from tests.support.faults import fault_env, release, wait_paused

LOCK_FILES = ("requirements.lock", "environment.yml", "conda-lock.yml")
MID_COMMIT = {
    "target": "lockguard.io.project.files:_put_in_place",
    "call": 2,
}  # one file renamed, two to go


def write_intent(world, project: Path, pip: list[str]) -> Path:
    return world.intent(
        project,
        cuda="none",
        pip=pip,
        channels=["conda-forge"],
        extra="conda-from-knowledge = true\n",
    )


def lockguard(*args: str, fault: dict | None = None) -> subprocess.Popen:
    env = fault_env(fault) if fault else None
    return subprocess.Popen(
        [sys.executable, "-m", "lockguard", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> tuple[int, str]:
    """The child's exit code and what it printed (what is left of it)."""
    out, err = process.communicate(timeout=120)
    return process.returncode, out + err


def said_before_exit(process: subprocess.Popen, words: str) -> str | None:
    """Read the child's stderr until a line with `words` (returned) or its end (None)."""
    for line in process.stderr:
        if words in line:
            return line
    return None


def leftovers(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir() if p.name.endswith((".tmp", ".tmp.old")))


def consistent(lg, project: Path) -> bool:
    """All lock files from one resolve of the current intent: check finds nothing."""
    result = lg("check", "--intent", str(project / "lockguard.toml"), "--no-cache")
    return result.exit_code == 0 and "no findings" in result.output


@pytest.fixture
def project(tmp_path, world, lg):
    folder = tmp_path / "project"
    write_intent(world, folder, ["jinja2"])
    assert lg("resolve", "--intent", str(folder / "lockguard.toml")).exit_code == 0
    return folder


def test_two_resolves_of_different_intents_end_with_one_whole_set(project, world, tmp_path, lg):
    write_intent(world, project, ["jinja2", "numpy"])
    first = lockguard(
        "resolve",
        "--intent",
        str(project / "lockguard.toml"),
        fault={**MID_COMMIT, "action": "pause", "dir": str(tmp_path)},
    )
    wait_paused(tmp_path, process=first)  # requirements.lock is the new one, the other two are old
    # the user changes the intent and resolves again
    write_intent(world, project, ["jinja2", "hjson"])
    second = lockguard("resolve", "--intent", str(project / "lockguard.toml"))
    waiting = said_before_exit(second, "waiting for")
    release(tmp_path)
    assert waiting is not None, "the second resolve did not wait for the first"
    assert f"waiting for resolve (pid {first.pid}) on the lock set of {project}" in waiting
    assert finish(first)[0] == 0 and finish(second)[0] == 0
    assert consistent(lg, project)
    assert "hjson==" in (project / "requirements.lock").read_text()
    assert leftovers(project) == []


def test_no_wait_refuses_while_a_resolve_commits_and_check_never_reads_half_a_set(
    project, world, tmp_path, lg
):
    before = {name: (project / name).read_bytes() for name in LOCK_FILES}
    write_intent(world, project, ["jinja2", "numpy"])
    first = lockguard(
        "resolve",
        "--intent",
        str(project / "lockguard.toml"),
        fault={**MID_COMMIT, "action": "pause", "dir": str(tmp_path)},
    )
    wait_paused(tmp_path, process=first)
    assert (project / "requirements.lock").read_bytes() != before[
        "requirements.lock"
    ]  # half of the new set
    assert (project / "conda-lock.yml").read_bytes() == before["conda-lock.yml"]
    intent = str(project / "lockguard.toml")
    refused = subprocess.run(
        [sys.executable, "-m", "lockguard", "resolve", "--intent", intent, "--no-wait"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2
    assert f"the lock set of {project} is in use by resolve (pid {first.pid})" in refused.stderr
    checked = subprocess.run(
        [sys.executable, "-m", "lockguard", "check", "--intent", intent, "--no-wait"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 2 and f"resolve (pid {first.pid})" in checked.stderr
    # waits for the commit, then reads the whole set
    reader = lockguard("check", "--intent", intent)
    assert said_before_exit(reader, "waiting for") is not None
    release(tmp_path)
    assert finish(first)[0] == 0
    code, said = finish(reader)
    assert code == 0 and "no findings" in said
    assert consistent(lg, project)


def test_a_check_answered_from_its_memo_holds_the_lock_set_too(project, world, tmp_path, lg):
    """A repeated check (answered before click is imported) takes the shared lock as a full one
    does: while a resolve holds the set, `--no-wait` is refused and a plain check waits for it."""
    intent = str(project / "lockguard.toml")
    for args in (("check", "--intent", intent, "--no-wait"), ("check", "--intent", intent)):
        assert lg(*args).exit_code == 0  # each command line's answer kept
    holding = {
        "target": "lockguard.io.index.resolve_memo:memo_key",
        "action": "pause",
        "dir": str(tmp_path),
    }
    # holds the set; no file changed yet
    first = lockguard("resolve", "--intent", intent, fault=holding)
    wait_paused(tmp_path, process=first)
    refused = subprocess.run(
        [sys.executable, "-m", "lockguard", "check", "--intent", intent, "--no-wait"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and f"resolve (pid {first.pid})" in refused.stderr
    reader = lockguard("check", "--intent", intent)
    assert said_before_exit(reader, "waiting for") is not None
    release(tmp_path)
    assert finish(first)[0] == 0
    code, said = finish(reader)
    assert code == 0 and "no findings" in said


@pytest.mark.parametrize(
    "signum, exit_code", [(signal.SIGTERM, 130), (signal.SIGINT, 130), (signal.SIGHUP, 130)]
)
def test_a_signal_in_the_commit_leaves_the_whole_new_set_and_no_temporary_file(
    project, world, lg, signum, exit_code
):
    write_intent(world, project, ["jinja2", "numpy"])
    child = lockguard(
        "resolve",
        "--intent",
        str(project / "lockguard.toml"),
        fault={**MID_COMMIT, "action": "signal", "signum": int(signum)},
    )
    code, err = finish(child)
    assert code == exit_code, err
    assert leftovers(project) == []
    assert consistent(lg, project)
    assert "numpy==" in (project / "requirements.lock").read_text()


def test_the_temporary_files_of_a_killed_commit_are_removed_by_the_next_resolve(project, world, lg):
    write_intent(world, project, ["jinja2", "numpy"])
    child = lockguard(
        "resolve",
        "--intent",
        str(project / "lockguard.toml"),
        fault={**MID_COMMIT, "action": "exit", "code": 9},
    )  # SIGKILL-like: no cleanup runs
    assert finish(child)[0] == 9
    left = leftovers(project)
    assert left and not consistent(lg, project)  # what a kill leaves; signals never get here
    again = lg("resolve", "--intent", str(project / "lockguard.toml"))
    assert again.exit_code == 0, again.stderr
    assert again.stderr.count("left by an interrupted write") == len(left)
    assert leftovers(project) == [] and consistent(lg, project)


def test_the_lock_leaves_no_file_in_the_project_and_readers_share_it(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    with (
        LockSet(folder, exclusive=False, command="check", wait=False),
        LockSet(folder, exclusive=False, command="check", wait=False),
    ):
        pass
    with LockSet(folder, exclusive=True, command="resolve", wait=False):
        assert list(folder.iterdir()) == []
    assert list(folder.iterdir()) == []


def test_a_holder_note_replaced_by_a_fifo_is_never_waited_on(tmp_path):
    """The note naming a lock's holder lives in the cache folder: hostile state like the rest."""
    fifo = tmp_path / "note.json"
    os.mkfifo(fifo)
    code = f"from lockguard.io.kernel_lock import read_holder; print(read_holder({str(fifo)!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr
