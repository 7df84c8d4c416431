"""`lockguard doctor`: probe this machine and an environment; diagnose the known GPU failures."""

from __future__ import annotations

import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from lockguard import __version__
from lockguard.app.doctor import diagnose
from lockguard.cli.common import get_ui, intent_option, json_option
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
@json_option
@click.pass_context
def doctor(ctx, python_value, intent_path, smoke, timeout, as_json) -> int:
    """Check the NVIDIA driver, the GPUs, the system CUDA toolkits and libraries, the libraries
    torch actually loads, nvcc and gcc, /dev/shm and the installed packages against the lock; say
    what is wrong and how to fix it. Exit 1 when an error-level problem is found."""
    ui = get_ui(ctx, "doctor")
    python = target_python(python_value)
    limit = timeout or (SMOKE_TIMEOUT if smoke else PROBE_TIMEOUT)
    found = diagnose(python, intent_path=intent_path, smoke=smoke, timeout=limit, warn=ui.warn)
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
    up on PATH, as a shell would."""
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
        if not path.exists():
            raise InputError(
                f"--python {value}: {path} does not exist",
                file=str(path),
                key="--python",
                hint="pass the environment's interpreter, e.g. .venv/bin/python",
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
    if path.is_dir() or not os.access(path, os.X_OK):
        raise InputError(
            f"--python {value}: {path} is not an executable file",
            file=str(path),
            key="--python",
            hint="pass the environment's interpreter (its bin/python)",
        )
    return str(path)


def _default_python() -> str:
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if os.environ.get(key):
            candidate = Path(os.environ[key]) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
    return sys.executable
