"""Reading an environment's files and running its programs without trusting them: only regular
files are read, every read has a size bound, every child has a timeout, and a child that runs past
it (or floods its output) is killed together with its whole process group."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lockguard.errors import InputError

MIB = 1 << 20
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def open_regular(path: str | Path, limit: int | None = None) -> int:
    """A file descriptor of a regular file (never blocks on a FIFO); InputError naming the file
    when it is something else or larger than `limit` bytes. FileNotFoundError passes through."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path} is {_kind(info.st_mode)}, not a regular file", file=str(path),
                             hint="lockguard reads only regular files here; remove it or put the real file back")
        if limit is not None and info.st_size > limit:
            raise InputError(f"{path} is {info.st_size} bytes, more than the {limit} bytes such a file may have",
                             file=str(path), hint="it is damaged or not what its name says; reinstall its package")
    except BaseException:
        os.close(fd)
        raise
    return fd


def regular_file_sha256(path: str | Path):
    """The hashlib sha256 object over the bytes of a regular file, read in chunks (any size);
    open_regular's InputError for something else, OSError when it cannot be opened."""
    import hashlib

    digest = hashlib.sha256()
    with os.fdopen(open_regular(path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest


def read_bytes(path: str | Path, limit: int = 64 * MIB, *, missing_ok: bool = True) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (b"" when it is missing and missing_ok)."""
    try:
        fd = open_regular(path, limit)
    except (FileNotFoundError, NotADirectoryError):
        if missing_ok:
            return b""
        raise InputError(f"{path} does not exist", file=str(path)) from None
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", file=str(path)) from None
    chunks, size = [], 0
    try:
        while True:
            chunk = os.read(fd, min(MIB, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise InputError(f"{path} grew past {limit} bytes while it was read", file=str(path))
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path: str | Path, limit: int = 64 * MIB, *, missing_ok: bool = True) -> str:
    return read_bytes(path, limit, missing_ok=missing_ok).decode("utf-8", errors="replace")


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    flooded: bool = False  # more output than the limit: killed

    def stderr_tail(self, lines: int = 15) -> str:
        return "\n".join((self.stderr or self.stdout).strip().splitlines()[-lines:])


def _find_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


# Looked up once, when this module is imported (by the main thread): children are also started
# from threads, and a thread must not be the first to import a module (io/index/early.py says why).
_PRCTL = _find_prctl()


def _death_signal() -> Callable[[], None] | None:
    """For the child: get SIGKILL when lockguard dies, so no pip keeps writing into a prefix whose
    transaction is being undone (Linux prctl; None elsewhere)."""
    if _PRCTL is None:
        return None
    return lambda: _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_bounded(argv: list[str], *, timeout: float, env: dict | None = None, cwd: str | None = None,
                limit: int = 16 * MIB, on_line: Callable[[str], None] | None = None,
                tick: Callable[[subprocess.Popen], None] | None = None) -> Finished:
    """Run argv in its own process group. Its stdout and stderr are kept up to `limit` bytes each
    (more stdout kills it: `flooded`); `on_line` sees each stdout line as it comes; `tick` runs
    about four times a second while it runs. On timeout the whole group is killed."""
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=cwd, start_new_session=True, preexec_fn=_death_signal())
    state = {"flooded": False}
    out: list[bytes] = []
    err: list[bytes] = []

    def drain(stream, store: list[bytes], lines: bool) -> None:
        size = 0
        for chunk in iter((lambda: stream.readline(65536)) if lines else (lambda: stream.read(65536)), b""):
            if size < limit:
                store.append(chunk[: limit - size])
            size += len(chunk)
            if lines and on_line is not None and size <= limit:
                on_line(chunk.decode("utf-8", "replace").rstrip("\n"))
            if size > limit and store is out:
                state["flooded"] = True
                kill_group(process)

    readers = [threading.Thread(target=drain, args=(process.stdout, out, on_line is not None), daemon=True),
               threading.Thread(target=drain, args=(process.stderr, err, False), daemon=True)]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while process.poll() is None:
            if time.monotonic() > deadline:
                timed_out = True
                kill_group(process)
                break
            if tick is not None:
                tick(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.25)
    finally:
        if process.poll() is None:
            kill_group(process)
        process.wait()
        kill_group(process)  # whatever it left running in its group
        for reader in readers:
            reader.join(timeout=5)
    return Finished(process.returncode, b"".join(out).decode("utf-8", "replace"),
                    b"".join(err).decode("utf-8", "replace"), timed_out, state["flooded"])
