"""What the fleet engines need from the one subprocess runner, lockguard.io.run (issue 34, 4): text
fed to stdin as the child reads it (kubectl apply -f -), stderr line by line as it comes (srun's
"queued"), a stop asked while the child runs and SIGTERM before SIGKILL (srun gives its job back),
and the runner shipped by value to a Ray node that has no lockguard. Real children throughout."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from lockguard.io.run import run_bounded


def test_stdin_larger_than_a_pipe_is_fed_while_stdout_is_read():
    text = "".join(f"line {i}\n" for i in range(200_000))  # ~2 MB: far over a 64 KiB pipe
    done = run_bounded(["cat"], timeout=60, stdin=text)
    assert done.ok and done.stdout == text


def test_a_child_that_does_not_read_its_stdin_is_no_hang():
    done = run_bounded(["sh", "-c", "exec 0<&-; echo done"], timeout=30, stdin="x" * (1 << 20))
    assert done.ok and done.stdout == "done\n"


def test_stderr_lines_come_as_printed_and_a_stop_ends_the_child_with_sigterm_first():
    heard: list[tuple[float, str]] = []
    started = time.monotonic()
    child = (
        "trap 'echo got TERM >&2; exit 3' TERM\n"
        "echo 'srun: job 12 queued and waiting for resources' >&2\n"
        "while :; do sleep 0.1; done\n"
    )
    done = run_bounded(
        ["sh", "-c", child],
        timeout=60,
        on_stderr_line=lambda line: heard.append((time.monotonic() - started, line)),
        stop=lambda: "it waits" if heard else None,
        term_grace=10,
    )
    assert heard[0][1] == "srun: job 12 queued and waiting for resources" and heard[0][0] < 10
    assert done.stopped == "it waits" and not done.timed_out and done.returncode == 3
    assert "got TERM" in done.stderr and done.problem == "sh was stopped: it waits"


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace():
    started = time.monotonic()
    done = run_bounded(
        ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"], timeout=1, term_grace=1
    )
    assert done.timed_out and done.returncode == -9 and time.monotonic() - started < 20


def test_the_ray_task_and_the_runner_travel_by_value_to_a_node_without_lockguard(tmp_path):
    """What ray_engine ships: the task and lockguard.io.run pickled by value (the ctypes prctl
    lookup travels as the call that finds it again), run where `import lockguard` fails."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    from lockguard.io import run as runner
    from lockguard.io.engines import ray_task

    cloudpickle.register_pickle_by_value(runner)
    cloudpickle.register_pickle_by_value(ray_task)
    try:
        blob = cloudpickle.dumps(ray_task.run_node_script)
    finally:
        cloudpickle.unregister_pickle_by_value(ray_task)
        cloudpickle.unregister_pickle_by_value(runner)
    (tmp_path / "task.pickle").write_bytes(blob)
    node = (
        "import pickle, sys\n"
        "sys.modules['lockguard'] = None  # this node has no lockguard\n"
        "task = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "answer = task('echo $LOCKGUARD_NODE; cat lockguard.toml', {'LOCKGUARD_NODE': 'gpu7'},"
        " 30, {'lockguard.toml': 'x = 1'})\n"
        "print(answer['stdout'], end='')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", node, str(tmp_path / "task.pickle")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "gpu7\nx = 1"
