"""The environment's own interpreter, asked what it is: its sys.path, its site folders and version,
under a timeout and with its answer checked for shape (nothing in an environment is trusted). A
--python value is a path, never a name looked up on PATH."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.read import (
    MIB,
)
from lockguard.io.run import run_bounded

_MARK = "LOCKGUARD-FACTS:"
_ASK = r"""
import json, site, sys, sysconfig
paths = sysconfig.get_paths()
print("LOCKGUARD-FACTS:" + json.dumps({
    "prefix": sys.prefix, "executable": sys.executable, "path": sys.path,
    "base_prefix": sys.base_prefix,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "user_site": site.getusersitepackages() if site.ENABLE_USER_SITE else None,
    "purelib": paths["purelib"], "platlib": paths["platlib"], "scripts": paths.get("scripts"),
    "data": paths.get("data"), "include": paths.get("include"),
}))
"""
_FACT_TYPES = {"prefix": str, "path": list, "version": str, "purelib": str, "platlib": str}
_OPTIONAL = ("user_site", "scripts", "data", "include", "executable", "base_prefix")


@dataclass(frozen=True, slots=True, kw_only=True)
class InterpreterFacts:
    """What an interpreter says of itself (_ASK's answer, checked by _facts_problem)."""

    prefix: str
    path: tuple[str, ...]
    version: str
    purelib: str
    platlib: str
    user_site: str | None = None
    scripts: str | None = None
    data: str | None = None
    include: str | None = None
    executable: str | None = None
    base_prefix: str | None = None

    def scheme(self) -> dict[str, str]:
        """The install scheme's folders the interpreter named (sysconfig's keys)."""
        folders = {
            "purelib": self.purelib,
            "platlib": self.platlib,
            "scripts": self.scripts,
            "data": self.data,
            "include": self.include,
        }
        return {key: folder for key, folder in folders.items() if folder}


def interpreter_timeout() -> float:
    try:
        return float(os.environ.get("LOCKGUARD_INTERPRETER_TIMEOUT", "60"))
    except ValueError:
        return 60.0


def interpreter_of(prefix: Path | None, python: Path | None) -> Path:
    """The interpreter to ask. A --python value is a path (relative ones against the working
    directory), never a name looked up on PATH; the venv's symlink is kept, not resolved."""
    if python is not None:
        python = Path(os.path.abspath(python))
        if not reachable(python):
            raise InputError(
                f"{python} does not exist", file=str(python), hint="pass the environment's python"
            )
        return python
    assert prefix is not None
    prefix = Path(os.path.abspath(prefix))
    for candidate in (prefix / "bin" / "python", prefix / "bin" / "python3", prefix / "python.exe"):
        if reachable(candidate):
            return candidate
    raise InputError(
        f"{prefix} has no bin/python: not a virtual environment or conda prefix",
        file=str(prefix),
        hint="create it first (python -m venv / conda create), or pass --python EXE",
    )


def reachable(path: Path) -> bool:
    """Whether path exists; a path this user may not look at (a folder on its way it cannot
    enter, the interpreter a venv links to in such a folder) is bad input naming it, exit 2."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise InputError(
            f"cannot run {path}: {exc.strerror or exc} (stat {exc.filename or path})",
            file=str(path),
            hint="a symlink loop: point the link at a real interpreter, or recreate the "
            "environment (python -m venv --clear DIR)"
            if exc.errno == errno.ELOOP
            else "the interpreter, or a folder on its way, is not open to this user: run as a "
            "user that can run it, or pass another --python",
        ) from None
    return True


def ask_interpreter(python: Path, env: dict[str, str] | None = None) -> InterpreterFacts:
    timeout = interpreter_timeout()
    done = run_bounded(
        [str(python), "-B", "-c", _ASK],
        timeout=timeout,
        env=env,
        cap=4 * MIB,
        stderr_cap=4 * MIB,
        die_with_lockguard=True,
    )
    if done.returncode is None:
        raise InputError(f"cannot run {python}: {done.start_error}", file=str(python))
    if done.timed_out:
        raise InputError(
            f"{python} did not answer within {timeout:g} s; it was stopped (with its children)",
            file=str(python),
            hint="is it a working Python interpreter? try `PYTHON -c pass`",
        )
    if done.flooded:
        raise InputError(
            f"{python} printed more than 4 MiB instead of its sys.path; it was stopped",
            file=str(python),
        )
    if done.returncode != 0:
        raise InputError(
            f"{python} failed to report its sys.path (exit {done.returncode}): "
            f"{done.stderr_tail(5)[-500:]}",
            file=str(python),
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    try:
        facts: object = json.loads(lines[-1][len(_MARK) :]) if lines else None
    except (
        ValueError,
        RecursionError,
    ):  # nesting deep enough to exhaust the parser is no answer either
        facts = None
    problem = _facts_problem(facts)
    if problem or not isinstance(facts, dict):
        shown = done.stdout.strip()[:200]
        raise InputError(
            f"{python} is not a Python that lockguard can ask for its sys.path: {problem}"
            + (f" (it printed {shown!r})" if shown else " (it printed nothing)"),
            file=str(python),
            hint="pass the environment's own python (bin/python of a venv or conda prefix)",
        )
    return InterpreterFacts(
        prefix=facts["prefix"],
        path=tuple(facts["path"]),
        version=facts["version"],
        purelib=facts["purelib"],
        platlib=facts["platlib"],
        user_site=facts.get("user_site"),
        scripts=facts.get("scripts"),
        data=facts.get("data"),
        include=facts.get("include"),
        executable=facts.get("executable"),
        base_prefix=facts.get("base_prefix"),
    )


def _facts_problem(facts: object) -> str | None:
    if not isinstance(facts, dict):
        return "no answer of the expected form"
    for key, kind in _FACT_TYPES.items():
        if not isinstance(facts.get(key), kind):
            return f"its answer has no {key}"
    if not all(isinstance(p, str) for p in facts["path"]):
        return "its sys.path holds something other than text"
    for key in _OPTIONAL:
        if facts.get(key) is not None and not isinstance(facts[key], str):
            return f"its {key} is not text"
    return None
