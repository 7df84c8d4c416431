"""The kernel locks on lockguard's own state (io/kernel_lock.py), between real processes: a busy
lock names its holder, --no-wait refuses, a waiter gets the lock when the holder lets go, a lock
left by a killed process is taken over, readers share; and the tests' fault seam works."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lockguard.io.kernel_lock import Holder, LockBusy, held, live_holder, read_holder
from lockguard.io.state_paths import StatePathRefused
from tests.support.faults import fault_env, release, wait_paused

ME = Holder("check", 1)


def hold_in_child(lock, *, exclusive=True, until=None, drop=False):
    """A child process that holds `lock` until `until` exists (or it is killed); with `drop`, it
    removes the lock file as it lets go."""
    code = textwrap.dedent(f"""
        import os, sys, time
        from lockguard.io.kernel_lock import Holder, held
        holder = Holder("clean-install", os.getpid(), "20261201-1203")
        drop = (lambda: os.unlink({str(lock)!r})) if {drop} else None
        with held({str(lock)!r}, exclusive={exclusive}, holder=holder, what="the prefix",
                  drop=drop):
            print("held", flush=True)
            while {str(until)!r} == "None" or not os.path.exists({str(until)!r}):
                time.sleep(0.02)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
    return child


def test_a_busy_lock_names_its_holder_and_no_wait_refuses(tmp_path):
    lock = tmp_path / "lock"
    child = hold_in_child(lock)
    try:
        assert read_holder(lock) == Holder("clean-install", child.pid, "20261201-1203")
        with (
            pytest.raises(LockBusy) as raised,
            held(lock, exclusive=False, holder=ME, what=".venv", wait=False),
        ):
            pass
        assert raised.value.exit_code == 2
        assert f"clean-install 20261201-1203 (pid {child.pid})" in raised.value.message
    finally:
        child.kill()
        child.wait()


def test_a_waiter_says_whom_it_waits_for_and_gets_the_lock_when_it_is_let_go(tmp_path):
    lock, go = tmp_path / "lock", tmp_path / "go"
    child = hold_in_child(lock, until=go)
    said = []

    def on_wait(message):
        said.append(message)
        go.write_text("")  # the holder finishes while we wait

    with held(lock, exclusive=True, holder=ME, what="the prefix .venv", on_wait=on_wait):
        assert read_holder(lock) == ME
    child.wait(timeout=10)
    assert said == [
        f"waiting for clean-install 20261201-1203 (pid {child.pid}) on the prefix .venv"
    ]
    assert read_holder(lock) is None  # emptied on release


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    lock = tmp_path / "lock"
    child = hold_in_child(lock)
    child.send_signal(signal.SIGKILL)
    child.wait()
    started = time.monotonic()
    with held(lock, exclusive=True, holder=ME, what="x", wait=False):
        pass
    assert time.monotonic() - started < 1


def test_readers_share_and_keep_a_writer_out(tmp_path):
    lock = tmp_path / "lock"
    child = hold_in_child(lock, exclusive=False)
    try:
        with held(lock, exclusive=False, holder=ME, what="x", wait=False):
            pass
        with (
            pytest.raises(LockBusy, match="another lockguard run"),
            held(lock, exclusive=True, holder=ME, what="x", wait=False),
        ):
            pass
    finally:
        child.kill()
        child.wait()


def test_a_reader_of_a_folder_it_cannot_write_runs_without_the_lock(tmp_path, monkeypatch):
    import os

    def refuse(path, flags, mode=0o777):
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode)

    real_open = os.open
    monkeypatch.setattr(os, "open", refuse)
    with held(tmp_path / "absent", exclusive=False, holder=ME, what="x", wait=False):
        pass
    with (
        pytest.raises(PermissionError),
        held(tmp_path / "absent", exclusive=True, holder=ME, what="x"),
    ):
        pass


def test_the_fault_seam_pauses_raises_and_kills_a_child_at_a_named_function(tmp_path):
    code = "from lockguard.io.kernel_lock import read_holder as r; r('a'); print('second', r('b'))"
    pause = {
        "target": "lockguard.io.kernel_lock:read_holder",
        "action": "pause",
        "dir": str(tmp_path),
        "call": 2,
    }
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=fault_env(pause), stdout=subprocess.PIPE, text=True
    )
    wait_paused(tmp_path, process=child)
    assert child.poll() is None
    release(tmp_path)
    assert child.communicate(timeout=30)[0].strip() == "second None"

    enospc = {"target": "lockguard.io.kernel_lock:read_holder", "action": "raise", "errno": 28}
    failed = subprocess.run(
        [sys.executable, "-c", code], env=fault_env(enospc), capture_output=True, text=True
    )
    assert "No space left on device" in failed.stderr

    die = {
        "target": "lockguard.io.kernel_lock:read_holder",
        "action": "exit",
        "when": "after",
        "code": 9,
    }
    dead = subprocess.run(
        [sys.executable, "-c", code], env=fault_env(die), capture_output=True, text=True
    )
    assert dead.returncode == 9 and dead.stdout == ""


@pytest.mark.parametrize("exclusive", [True, False])
def test_a_lock_file_that_is_a_symlink_is_refused_and_its_target_left_alone(tmp_path, exclusive):
    victim, absent = tmp_path / "victim.txt", tmp_path / "absent.txt"
    victim.write_bytes(b"root:x:0:0\n")
    for target in (victim, absent):
        lock = tmp_path / f"lock-{target.stem}"
        lock.symlink_to(target)
        with (
            pytest.raises(StatePathRefused, match=f"it is a symlink to {target}") as raised,
            held(lock, exclusive=exclusive, holder=ME, what="x"),
        ):
            pass
        assert raised.value.exit_code == 2 and raised.value.file == str(lock)
    assert victim.read_bytes() == b"root:x:0:0\n"
    assert not absent.exists()


@pytest.mark.parametrize("kind", ["a FIFO", "a folder"])
def test_a_lock_file_that_is_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path, kind):
    import os

    lock = tmp_path / "lock"
    os.mkfifo(lock) if kind == "a FIFO" else lock.mkdir()
    signal.alarm(10)  # a FIFO that blocks an open fails the test instead of hanging it
    try:
        for exclusive in (True, False):
            with (
                pytest.raises(StatePathRefused, match=f"it is {kind}"),
                held(lock, exclusive=exclusive, holder=ME, what="x"),
            ):
                pass
        assert live_holder(lock) is None
    finally:
        signal.alarm(0)


def test_a_waiter_whose_lock_file_was_dropped_takes_the_one_at_the_path(tmp_path):
    """The holder removes the lock file as it lets go (a state folder it made for nothing): a run
    that waited on that file must not hold a lock no one else can see, but the file at the path."""
    lock, go = tmp_path / "lock", tmp_path / "go"
    child = hold_in_child(lock, until=go, drop=True)

    def on_wait(message):
        go.write_text("")

    with held(lock, exclusive=True, holder=ME, what="x", on_wait=on_wait, reopen=lambda: None):
        child.wait(timeout=10)
        assert lock.exists() and read_holder(lock) == ME
        with (
            pytest.raises(LockBusy),
            held(lock, exclusive=True, holder=ME, what="x", wait=False),
        ):
            pass
