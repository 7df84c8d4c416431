"""The one subprocess runner of lockguard: pip, an environment's interpreter (its sys.path, the
import smoke), the doctor's probe, nvcc, ldconfig, git all run through here; so do the two children
that are not waited for here: the prefix listing (`find`, started early and collected later) and
the detached deletion of a finished run's trash (`start_in_background`, `start_detached`).

A child never runs unbounded: it gets its own process group and a deadline, and when it runs past
the deadline, or prints more than its cap on stdout, the whole group is killed (an interpreter that
hangs in a grandchild must not outlive lockguard); whatever it leaves running in its group when it
exits is killed too. Its output is read as it comes (the child never blocks on a full pipe): stdout
up to the cap, line by line to `on_line` if asked, the last `stderr_cap` bytes of stderr (every line
to `on_stderr_line` if asked). `stdin` text is written as the child reads it. A child that cannot
start, times out, floods or is stopped (`stop`) comes back in `Finished` (returncode None,
timed_out, flooded, stopped, and `problem` in words); this never raises for the child's sake.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

OUTPUT_CAP = 16 << 20  # bytes kept from stdout; the probe's JSON is a few hundred KiB at most
STDERR_CAP = 256 << 10  # stderr: only its tail is shown
TICK_SECONDS = 0.25  # how often `tick` runs while the child does
LINGER_SECONDS = 1.0  # how long output is still read after the child exited
LINE_CAP = 64 << 10  # a stderr line longer than this goes to `on_stderr_line` in pieces


@dataclass
class Finished:
    argv: list[str]
    returncode: int | None  # None: it did not start (see `problem`)
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    flooded: bool = False  # stdout went past the cap: it was killed
    problem: str | None = None  # why it did not start, or why it was killed
    start_error: str = field(default="", repr=False)  # the OS's words when it did not start
    stopped: str | None = None  # why `stop` ended it before it finished

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def stderr_tail(self, lines: int = 15) -> str:
        return "\n".join((self.stderr or self.stdout).strip().splitlines()[-lines:])


def _find_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


class _Prctl:
    """prctl(2), found once. Pickled as the call that finds it again: the fleet's Ray task ships
    this module by value to nodes that may lack lockguard, and a ctypes pointer cannot travel."""

    def __init__(self) -> None:
        self.call = _find_prctl()

    def __reduce__(self):
        return (_Prctl, ())


# Looked up when this module is imported (by the main thread): children are also started from
# threads, and a thread must not be the first to import a module (io/index/early.py says why).
_PRCTL = _Prctl()


def _death_signal() -> Callable[[], None] | None:
    """For the child: get SIGKILL when lockguard dies, so no pip keeps writing into a prefix whose
    transaction is being undone (Linux prctl; None elsewhere)."""
    call = _PRCTL.call
    if call is None:
        return None
    return lambda: call(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_bounded(
    argv: list[str],
    *,
    timeout: float,
    env: dict | None = None,
    cwd: str | None = None,
    what: str | None = None,
    cap: int = OUTPUT_CAP,
    stderr_cap: int = STDERR_CAP,
    on_line: Callable[[str], None] | None = None,
    tick: Callable[[subprocess.Popen], None] | None = None,
    die_with_lockguard: bool = False,
    stdin: str | None = None,
    on_stderr_line: Callable[[str], None] | None = None,
    stop: Callable[[], str | None] | None = None,
    term_grace: float = 0.0,
) -> Finished:
    """Run `argv` (stdin closed, or fed `stdin`) in its own process group, killed with its group
    after `timeout` seconds or more than `cap` bytes of stdout. `on_line` sees each stdout line as
    it comes, `on_stderr_line` each stderr line; `tick` runs about four times a second while the
    child does; `stop` is asked as output comes and at least as often: a reason it gives ends the
    child as the deadline does; `term_grace`: the group gets SIGTERM first and SIGKILL only that
    many seconds later (srun forwards SIGTERM to its tasks and gives back a pending allocation;
    SIGKILL would leave both); `die_with_lockguard`: the child is killed if lockguard dies first."""
    label = what or os.path.basename(argv[0])
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_death_signal() if die_with_lockguard else None,
        )
    except OSError as exc:
        cause = exc.strerror or str(exc)
        return Finished(argv, None, problem=f"cannot run {argv[0]}: {cause}", start_error=cause)
    reader = _Output(process, cap, stderr_cap, on_line, on_stderr_line, stdin)
    deadline = time.monotonic() + timeout
    kill_at = float("inf")  # when an ending child that ignored SIGTERM gets SIGKILL
    timed_out = False
    stopped = None
    exited_at = None
    ticked = 0.0
    try:
        while reader.open():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
                kill_group(process)  # what it left running in its group
            if exited_at is not None and now - exited_at > LINGER_SECONDS:
                break  # something outside its group holds the pipes: stop reading
            if exited_at is None and kill_at == float("inf"):
                if now >= deadline:
                    timed_out = True
                elif stop is not None:
                    stopped = stop()
                if timed_out or stopped:
                    kill_at = now + _end(process, term_grace)
                    deadline = float("inf")
            if now >= kill_at or reader.flooded:
                kill_group(process)
            reader.read(min(max(min(deadline, kill_at) - now, 0.0), TICK_SECONDS))
            if tick is not None and exited_at is None and time.monotonic() - ticked >= TICK_SECONDS:
                ticked = time.monotonic()
                tick(process)
        if process.poll() is None and kill_at < float("inf"):  # ending: its grace, no more
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, kill_at - time.monotonic()))
        elif process.poll() is None:  # it closed its pipes and goes on running
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        if process.poll() is None and term_grace > 0 and kill_at == float("inf"):
            # lockguard itself is interrupted: a child with a grace (srun) gets SIGTERM and its
            # grace to end its own way (give back a pending allocation); a second interrupt, or
            # the grace running out, ends the wait and SIGKILL follows
            with contextlib.suppress(BaseException):  # the first interrupt still goes out
                process.wait(timeout=_end(process, term_grace))
        if process.poll() is None:
            kill_group(process)
        returncode = process.wait()
        kill_group(process)
        reader.close()
    problem = None
    if timed_out:
        problem = (
            f"{label} did not finish within {timeout:g} s; it was killed with its child processes"
        )
    elif reader.flooded:
        problem = (
            f"{label} printed more than {cap >> 20} MiB; it was killed with its child processes"
        )
    elif stopped:
        problem = f"{label} was stopped: {stopped}"
    return Finished(
        argv,
        returncode,
        reader.stdout(),
        reader.stderr(),
        timed_out,
        reader.flooded,
        problem,
        stopped=stopped,
    )


def start_in_background(
    argv: list[str], *, cwd: str, stdout_file, pass_fds: tuple[int, ...], env: dict
) -> subprocess.Popen | None:
    """Start a child whose output goes to files, to be collected by the caller (who waits for it,
    and kills it if it gives up on it); None when it cannot start."""
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout_file,
            stderr=subprocess.DEVNULL,
            pass_fds=pass_fds,
            env=env,
        )
    except OSError:
        return None


def start_detached(argv: list[str]) -> bool:
    """Start a child that outlives lockguard (its own session, no standard streams); False when
    it cannot start."""
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    return True


def _end(process: subprocess.Popen, grace: float) -> float:
    """End the child's group: SIGTERM with a grace of `grace` seconds, or SIGKILL at once. The
    seconds until SIGKILL come back."""
    if grace <= 0:
        kill_group(process)
        return 0.0
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    return grace


class _Output:
    """The child's stdout (up to the cap, by line to `on_line`), the tail of its stderr (every
    line to `on_err_line`), and its stdin fed as it reads."""

    def __init__(
        self,
        process: subprocess.Popen,
        cap: int,
        stderr_cap: int,
        on_line,
        on_err_line=None,
        feed: str | None = None,
    ) -> None:
        self.process = process
        self.cap = cap
        self.stderr_cap = stderr_cap
        self.on_line = on_line
        self.on_err_line = on_err_line
        self.out = bytearray()
        self.err = bytearray()
        self.size = 0  # every stdout byte seen, kept or not
        self.pending = b""  # a stdout line not finished yet
        self.err_pending = b""  # a stderr line not finished yet
        self.feed = memoryview((feed or "").encode("utf-8"))
        self.flooded = False
        self.selector = selectors.DefaultSelector()
        if process.stdout is None or process.stderr is None:
            raise ValueError("the child's stdout and stderr must be pipes")
        self.selector.register(process.stdout, selectors.EVENT_READ)
        self.selector.register(process.stderr, selectors.EVENT_READ)
        if process.stdin is not None:
            if self.feed:
                # a full pipe must not block the reading of stdout and stderr
                os.set_blocking(process.stdin.fileno(), False)
                self.selector.register(process.stdin, selectors.EVENT_WRITE)
            else:
                process.stdin.close()

    def open(self) -> bool:
        return bool(self.selector.get_map())

    def read(self, wait: float) -> None:
        for key, _events in self.selector.select(wait):
            if key.fileobj is self.process.stdin:
                self._write()
                continue
            chunk = os.read(key.fd, 1 << 16)
            if not chunk:
                self.selector.unregister(key.fileobj)
                if key.fileobj is self.process.stdout:
                    self._lines(b"", final=True)
                else:
                    self._err_lines(b"", final=True)
            elif key.fileobj is self.process.stdout:
                self._stdout(chunk)
            else:
                self.err += chunk
                if len(self.err) > self.stderr_cap:
                    del self.err[: len(self.err) - self.stderr_cap]
                self._err_lines(chunk, final=False)

    def _write(self) -> None:
        stream = self.process.stdin
        assert stream is not None  # registered only when it is a pipe
        try:
            written = os.write(stream.fileno(), self.feed[: 1 << 16])
        except BlockingIOError:
            return
        except OSError:  # it closed its stdin (EPIPE): it reads no more
            written = len(self.feed)
        self.feed = self.feed[written:]
        if not self.feed:
            self.selector.unregister(stream)
            with contextlib.suppress(OSError):
                stream.close()

    def _err_lines(self, chunk: bytes, *, final: bool) -> None:
        if self.on_err_line is None:
            return
        self.err_pending += chunk
        *whole, self.err_pending = self.err_pending.split(b"\n")
        if final and self.err_pending or len(self.err_pending) > LINE_CAP:
            whole.append(self.err_pending)
            self.err_pending = b""
        for line in whole:
            self.on_err_line(line.decode("utf-8", "replace"))

    def _stdout(self, chunk: bytes) -> None:
        kept = chunk[: max(self.cap - self.size, 0)]
        self.size += len(chunk)
        self.out += kept
        self._lines(kept, final=False)
        if self.size > self.cap:
            self.flooded = True
            self.on_line, self.pending = None, b""  # nothing past the cap, not even the cut line

    def _lines(self, kept: bytes, *, final: bool) -> None:
        if self.on_line is None:
            return
        self.pending += kept
        *whole, self.pending = self.pending.split(b"\n")
        if final and self.pending:
            whole.append(self.pending)
            self.pending = b""
        for line in whole:
            self.on_line(line.decode("utf-8", "replace"))
        if final:
            self.on_line = None  # nothing past the cap, nothing twice

    def stdout(self) -> str:
        return bytes(self.out).decode("utf-8", "replace")

    def stderr(self) -> str:
        return bytes(self.err).decode("utf-8", "replace")

    def close(self) -> None:
        self.selector.close()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:  # pipes, as __init__ made sure
                with contextlib.suppress(OSError):
                    stream.close()
