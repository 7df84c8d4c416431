"""The uv engine (the default): `uv pip install --no-deps --require-hashes -r FILE` of the lock's
own entries (the same file pip would get: name==version with every sha256, the lock's index options,
a --find-links page of a pylock.toml's file URLs), into the target interpreter's environment
(`--python`); uv needs no pip inside it. The binary is the `uv` wheel's, found through its Python
API (uv.find_uv_bin()).

What uv may read is fixed by lockguard, not by the machine: --no-config (no uv.toml or
pyproject.toml, user's or system's, can add an index or change what is installed) and only the UV_*
variables that say how to download (cache, TLS, timeouts, credentials), never where from or what.
Files are copied from uv's cache (--link-mode copy): a hard link would make a file edited in the
prefix edit uv's cache too (and every other environment linked to it), and restore could no longer
promise the bytes it puts back are the ones the run found (`--link-mode clone` is no way out: where
the file system cannot reflink, ext4 for one, uv 0.13 falls back to hard links). The cost (numpy +
requests, 6 wheels, 1,176 files, warm uv cache, ext4, bench/install_floor.py): 0.39-0.43 s copied
against 0.04-0.07 s hard-linked. uv writes a file that already exists as a new inode (a rename over
it), so the transaction's shadow keeps the old bytes, as with pip. No bytecode is compiled (uv's
default; the .pyc files uv's --compile-bytecode writes are in no RECORD); Python writes it on first
import. uv writes INSTALLER as `uv`, and an empty `<prefix>/.lock` (its environment lock: the run's,
undone by restore). uv's cache is its own (UV_CACHE_DIR, else the user's uv cache: a warm cache is
what makes a re-install fast): it keys what it unpacked by where it found the file, so each of
lockguard's cached files is offered from its own folder (app/install_files.py), unpacked once."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from lockguard.errors import InputError, InstallFailed
from lockguard.io.env.engines.base import EngineProgress, InstallResult, LockedFiles
from lockguard.io.index.http_settings import request_timeout
from lockguard.io.run import run_bounded

# how to download, never where from or what: a user's UV_INDEX_URL, UV_CONSTRAINT, UV_LINK_MODE
# or UV_COMPILE_BYTECODE does not reach the engine
_KEPT = {
    "UV_CACHE_DIR",
    "UV_NATIVE_TLS",
    "UV_HTTP_TIMEOUT",
    "UV_HTTP_RETRIES",
    "UV_CONCURRENT_DOWNLOADS",
    "UV_CONCURRENT_INSTALLS",
    "UV_KEYRING_PROVIDER",
}
_HINT = "run clean-install with --installer pip (pip in the target environment installs instead)"


def _env() -> dict:
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("UV_")
        or key in _KEPT
        or (key.startswith("UV_INDEX_") and key.endswith(("_USERNAME", "_PASSWORD")))
    }
    # a download that does not answer gets the bound lockguard's own requests have (no answer
    # within LOCKGUARD_HTTP_TIMEOUT, tried twice), unless the user set uv's own
    bounds = {
        "UV_HTTP_TIMEOUT": str(max(1, math.ceil(request_timeout()))),  # uv reads whole seconds
        "UV_HTTP_RETRIES": "1",
    }
    return {
        **bounds,
        **kept,
        "UV_NO_CONFIG": "1",
        "PYTHONNOUSERSITE": "1",
        "NO_COLOR": "1",
    }


def uv_binary() -> str:
    """The uv wheel's binary; InputError (exit 2) naming why there is none."""
    try:
        import uv
    except ImportError as exc:
        raise InputError(f"the uv install engine is not installed ({exc})", hint=_HINT) from exc
    try:
        return str(uv.find_uv_bin())
    except FileNotFoundError as exc:
        raise InputError(
            f"the uv wheel has no uv binary for this machine ({exc})", hint=_HINT
        ) from exc


class UvEngine:
    name = "uv"
    flags = "--require-hashes --no-deps"
    batches = True

    def ready(self) -> str:
        binary = uv_binary()
        done = run_bounded([binary, "--version"], timeout=30, env=_env())
        if done.returncode != 0:
            cause = done.start_error or (done.stderr.strip() or done.stdout.strip())[-300:]
            raise InputError(f"uv cannot run on this machine: {binary}: {cause}", hint=_HINT)
        return done.stdout.strip()

    def install(
        self,
        prefix: Path,
        python: str,
        locked: LockedFiles,
        *,
        deadline: float,
        progress: EngineProgress,
    ) -> InstallResult:
        argv = [
            uv_binary(),
            "pip",
            "install",
            "--no-config",
            "--no-deps",
            "--require-hashes",
            "--python",
            python,
            "--link-mode",
            "copy",
            "--no-compile-bytecode",
            # pip's rule: the best match across the lock's indexes; --require-hashes already
            # refuses any other bytes, so a second index cannot substitute a file
            "--index-strategy",
            "unsafe-best-match",
            "--no-python-downloads",
            "--no-progress",
            "-r",
            str(locked.requirements),
        ]
        timeout = max(deadline - time.monotonic(), 1.0)
        done = run_bounded(
            argv,
            timeout=timeout,
            env=_env(),
            cwd=str(locked.requirements.parent),  # no pyproject.toml of the user's folder
            on_line=progress.line,
            on_stderr_line=progress.line,
            tick=lambda _process: progress.tick(),
            cap=64 << 20,
            stderr_cap=64 << 20,
            die_with_lockguard=True,
        )
        if done.returncode is None:
            raise InstallFailed(f"cannot run uv: {done.start_error}", hint=_HINT)
        if done.timed_out:
            raise InstallFailed(
                f"uv pip install did not finish within {timeout:.0f} s; uv was stopped"
            )
        if done.returncode != 0:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-12:]
            raise InstallFailed(
                f"uv pip install -r {locked.requirements.name} failed (uv exit "
                f"{done.returncode}):\n    " + "\n    ".join(tail),
                hint="fix the cause uv names and run clean-install again",
            )
        return InstallResult(self.name, done.stdout + done.stderr)
