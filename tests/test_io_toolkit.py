"""The outside world's rough edges, handled once (issue 24): one subprocess runner (io/run.py), one
safe reader (io/read.py), one atomic writer (io/write.py). Real children, real FIFOs, real files."""

from __future__ import annotations

import os
import stat
import sys
import time

import pytest

from lockguard.errors import InputError
from lockguard.io.read import NotRegular, read_env_bytes, read_head, read_regular, read_text
from lockguard.io.run import run_bounded
from lockguard.io.write import write_atomic


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_what_a_child_leaves_running_in_its_group_is_killed(tmp_path):
    marker = tmp_path / "pid"
    done = run_bounded(["sh", "-c", f"sleep 600 & echo $! > {marker}; echo started"], timeout=30)
    assert done.ok and done.stdout == "started\n"
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:  # killed, then reaped by init
        time.sleep(0.05)
    assert not _alive(pid)


def test_lines_come_as_they_are_printed_and_none_past_the_cap():
    lines: list[str] = []
    done = run_bounded(
        [sys.executable, "-c", "print('one'); print('two', flush=True); print('three', end='')"],
        timeout=30,
        on_line=lines.append,
    )
    assert done.ok and lines == ["one", "two", "three"]
    capped: list[str] = []
    flood = run_bounded(
        [sys.executable, "-c", "print('first'); print('x' * 100000)"],
        timeout=30,
        cap=1000,
        on_line=capped.append,
    )
    assert flood.flooded and capped == ["first"] and len(flood.stdout) == 1000


def test_a_child_that_closes_its_output_and_runs_on_is_stopped_at_its_deadline():
    done = run_bounded(
        ["sh", "-c", "exec >/dev/null 2>&1; sleep 600"], timeout=1, what="the sleeper"
    )
    assert (
        done.timed_out and not done.ok and "the sleeper did not finish within 1 s" in done.problem
    )


def test_the_tail_of_stderr_is_kept_and_tick_runs_while_the_child_does():
    ticks = []
    done = run_bounded(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.stderr.write('a' * 5000 + 'END'); time.sleep(0.6)",
        ],
        timeout=30,
        stderr_cap=100,
        tick=ticks.append,
    )
    assert done.stderr.endswith("END") and len(done.stderr) == 100 and ticks


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "requirements.lock"
    os.mkfifo(fifo)
    with pytest.raises(
        NotRegular, match="lock file .* is a FIFO \\(named pipe\\), not a regular file"
    ):
        read_text(fifo, what="lock file", limit=1000)
    with pytest.raises(NotRegular, match="is a FIFO, not a regular file"):
        read_env_bytes(fifo)
    with pytest.raises(NotRegular):
        read_head(fifo, 10)


def test_a_link_is_refused_where_links_are_not_followed(tmp_path):
    (tmp_path / "target").write_bytes(b"data")
    (tmp_path / "link").symlink_to("target")
    assert read_regular(tmp_path / "link") == b"data"
    with pytest.raises(OSError):
        read_regular(tmp_path / "link", follow_links=False)
    with pytest.raises(InputError, match="more than the 3 bytes"):
        read_regular(tmp_path / "target", 3)


def test_an_atomic_write_keeps_the_mode_and_leaves_nothing_when_it_fails(tmp_path):
    target = tmp_path / "lock.txt"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    folder = tmp_path / "a-folder"
    (folder / "inside").mkdir(parents=True)  # a folder where the file goes: the rename fails
    with pytest.raises(OSError):
        write_atomic(folder, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a-folder",
        "lock.txt",
    ]  # no temporary left


@pytest.mark.skipif(
    not os.path.isdir("/sys/kernel"), reason="needs sysfs, where no file can be made"
)
def test_a_folder_where_nothing_can_be_written_is_named_by_the_target_not_the_temporary():
    """sysfs refuses a new file even to root, as a read-only project folder refuses a user."""
    with pytest.raises(OSError) as error:
        write_atomic("/sys/requirements.lock", "x")
    assert error.value.filename == "/sys/requirements.lock"
    assert ".tmp" not in str(error.value)


def test_an_interrupted_lockguard_gives_a_child_with_a_grace_its_sigterm(tmp_path):
    """srun gives back a pending allocation on SIGTERM: lockguard interrupted (Ctrl-C) while it
    runs an engine must not SIGKILL it at once (issue 30's signals follow-up)."""
    marker = tmp_path / "got-term"
    script = f"trap 'echo term > {marker}; exit 0' TERM; while :; do sleep 0.05; done"
    started = time.monotonic()

    def interrupt(_process):
        if time.monotonic() - started > 0.5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_bounded(["sh", "-c", script], timeout=30, tick=interrupt, term_grace=5)
    assert marker.read_text() == "term\n"
    assert time.monotonic() - started < 5  # it ended at SIGTERM, well within its grace
