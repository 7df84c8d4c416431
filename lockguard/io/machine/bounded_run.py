"""Run a child process with a deadline and a cap on what it may print.

The child gets its own process group, so a timeout kills it together with everything it started
(an interpreter that hangs in a grandchild must not outlive doctor). Output beyond the cap is
dropped and said so; the child never blocks on a full pipe.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

OUTPUT_CAP = 16 << 20  # bytes kept from stdout; the probe's JSON is a few hundred KiB at most
STDERR_CAP = 256 << 10  # stderr: only its tail is shown


@dataclass
class Finished:
    argv: list[str]
    returncode: int | None  # None: it did not start (see `problem`)
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False  # stdout went past the cap
    problem: str | None = None  # why it did not start, or why it was killed

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def run_bounded(argv: list[str], *, timeout: float, env: dict | None = None, what: str | None = None,
                cap: int = OUTPUT_CAP) -> Finished:
    """Run `argv`; kill its process group after `timeout` seconds. Never raises for the child's
    sake: a missing program, a timeout or a flood of output come back in `Finished`."""
    label = what or os.path.basename(argv[0])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, start_new_session=True)
    except OSError as exc:
        return Finished(argv, None, problem=f"cannot run {argv[0]}: {exc.strerror or exc}")
    out, err = bytearray(), bytearray()
    truncated = timed_out = False
    deadline = time.monotonic() + timeout
    exited_at = None
    lingering = False  # it exited, but something it started still holds the pipes
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while selector.get_map() and not truncated:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > 1.0:
                lingering = True
                break
            if now >= deadline:
                timed_out = True
                break
            for key, _ in selector.select(min(deadline - now, 0.5)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    truncated = len(out) + len(chunk) > cap
                    out += chunk[: cap - len(out)]
                else:
                    err += chunk
                    if len(err) > STDERR_CAP:
                        del err[: len(err) - STDERR_CAP]
    problem = None
    if timed_out or truncated or lingering:
        _kill_group(proc)  # the child, or what it left running
    if timed_out:
        problem = f"{label} did not finish within {timeout:g} s; it was killed with its child processes"
    elif truncated:
        problem = f"{label} printed more than {cap >> 20} MiB; it was killed with its child processes"
    try:
        returncode = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # closed its pipes but goes on running
        _kill_group(proc)
        returncode = proc.wait()
        timed_out = True
        problem = f"{label} did not finish within {timeout:g} s; it was killed with its child processes"
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    return Finished(argv, returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                    timed_out, truncated, problem)


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
