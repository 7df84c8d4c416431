"""`lockguard doctor`: probe this machine and an environment; diagnose the known GPU failures."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from lockguard import __version__
from lockguard.app.doctor_session import diagnose
from lockguard.cli.common import get_ui, intent_option, json_option, profile_option
from lockguard.doctor import record, report
from lockguard.errors import InputError

PROBE_TIMEOUT = 60  # seconds: `import torch` from a cold network filesystem, with room to spare
SMOKE_TIMEOUT = 180  # plus a CUDA context and a matmul on every GPU


@click.command()
@click.option(
    "--python",
    "python_value",
    default=None,
    metavar="EXE",
    help="The environment's interpreter: a path (relative to the working directory when it has a "
    "slash), or a name looked up on PATH (default: $VIRTUAL_ENV's or $CONDA_PREFIX's python, "
    "else this one).",
)
@intent_option
@click.option(
    "--smoke", is_flag=True, help="Also run a small matmul on each visible GPU, with a synchronize."
)
@click.option(
    "--timeout",
    "timeout",
    type=click.FloatRange(min=1),
    default=None,
    metavar="SECONDS",
    help=f"How long the probe may take (default {PROBE_TIMEOUT} s, {SMOKE_TIMEOUT} s with "
    "--smoke).",
)
@profile_option
@json_option
@click.pass_context
def doctor(ctx, python_value, intent_path, smoke, timeout, profile, as_json) -> int:
    """Check the NVIDIA driver, the GPUs, the system CUDA toolkits and libraries, the libraries
    torch actually loads, nvcc and gcc, /dev/shm and the installed packages against the lock; say
    what is wrong and how to fix it. Exit 1 when an error-level problem is found."""
    ui = get_ui(ctx, "doctor")
    python = target_python(python_value)
    limit = timeout or (SMOKE_TIMEOUT if smoke else PROBE_TIMEOUT)
    found = diagnose(
        python, intent_path=intent_path, smoke=smoke, timeout=limit, warn=ui.warn, profile=profile
    )
    code = found.exit_code
    if as_json:
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        ui.emit_json(
            record.node_record(
                found.facts,
                found.checks,
                node=found.node,
                node_source=found.node_source,
                time=now,
                version=__version__,
                exit_code=code,
                lock_meta=found.lock_meta,
            ),
            ok=code == 0,
            exit_code=code,
        )
    else:
        ui.out(
            report.text(
                found.facts, found.checks, header=f"lockguard doctor: {python} (node {found.node})"
            ).rstrip()
        )
    return code


def target_python(value: str | None) -> str:
    """The interpreter to probe. A value with a slash is a path (relative to the working directory,
    links kept: a venv's bin/python is a link whose target is not the venv); a bare name is looked
    up on PATH, as a shell would. One that cannot be run is bad input naming why."""
    if value is None:
        return _default_python()
    if not value.strip():
        raise InputError(
            "--python is empty",
            key="--python",
            hint="pass the environment's interpreter, e.g. .venv/bin/python",
        )
    if os.sep in value:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else Path.cwd() / path
        problem = unusable(path)
        if problem:
            raise InputError(
                f"--python {value}: {problem[0]}", file=str(path), key="--python", hint=problem[1]
            )
    else:
        found = shutil.which(value)
        if found is None:
            raise InputError(
                f"--python {value}: no {value} on PATH",
                key="--python",
                hint=f"give a path (./{value} for one in this directory), or the environment's "
                "bin/python",
            )
        path = Path(found)
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise InputError(
            f"--python {value}: {path} is not an executable file",
            file=str(path),
            key="--python",
            hint="pass the environment's interpreter (its bin/python)",
        )
    return str(path)


def _default_python() -> str:
    """$VIRTUAL_ENV's python, else $CONDA_PREFIX's, else this one. An active environment whose
    python cannot be run is bad input: diagnosing lockguard's own interpreter instead would
    answer another question than the one asked."""
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        folder = os.environ.get(key)
        if not folder:
            continue
        candidate = Path(folder) / "bin" / "python"
        problem = unusable(candidate)
        if problem is None and not os.path.isdir(candidate):
            return str(candidate)
        what, fix = problem or (f"{candidate} is a folder", "")
        raise InputError(
            f"{key}={folder} names the environment to diagnose, but {what}",
            file=str(candidate),
            key=key,
            hint=(fix + "; " if fix else "")
            + f"or deactivate it (unset {key}), or pass --python EXE",
        )
    return sys.executable


def unusable(path: Path) -> tuple[str, str] | None:
    """(what is wrong, the fix) when `path` cannot be started, from the kernel's own answer: a
    missing file, a symlink loop, a folder on the way this user cannot enter; None when it can be
    looked at."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return (
                f"{path} is a symlink loop ({_link_chain(path)})",
                "point the link at a real interpreter, or recreate the environment "
                "(python -m venv --clear DIR)",
            )
        if exc.errno == errno.EACCES:
            blocked = _closed_folder(path)
            where = f"{blocked} is not open to this user" if blocked else "Permission denied"
            return (
                f"cannot run {path}: {where}",
                "run as a user that can enter it, or pass an interpreter this user can run",
            )
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            dangling = os.path.islink(path)
            return (
                f"{path} is a symlink to {os.readlink(path)}, which does not exist"
                if dangling
                else f"{path} does not exist",
                "pass the environment's interpreter, e.g. .venv/bin/python",
            )
        return (f"cannot run {path}: {exc.strerror or exc}", "pass another interpreter")
    return None


def _link_chain(path: Path, limit: int = 6) -> str:
    """`a -> b -> a`: the links a loop goes through (the first few)."""
    seen: list[str] = [str(path)]
    current = str(path)
    for _ in range(limit):
        try:
            target = os.readlink(current)
        except OSError:
            break
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
        seen.append(current)
        if seen.count(current) > 1:
            break
    return " -> ".join(seen)


def _closed_folder(path: Path) -> str | None:
    """The first folder on the way to `path` (or to the file its links lead to) this user may not
    enter."""
    for way in (path, Path(os.path.realpath(path))):
        for parent in reversed(way.parents):
            if not os.access(parent, os.X_OK):
                return str(parent)
    return None
