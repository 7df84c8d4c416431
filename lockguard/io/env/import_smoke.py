"""The import smoke: after an apply, the target interpreter imports torch (when it is locked) and
the top-level modules of the intent's direct requirements, isolated (-I: no user site, no PYTHON*
variables, no working-directory modules) and without writing .pyc files (-B: the prefix stays
exactly what pip made). A failure is the first module that did not import, with stderr's tail."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from lockguard.io.run import run_bounded

_MARK = "LOCKGUARD-SMOKE:"
_SCRIPT = r"""
import importlib, json, sys, traceback
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        traceback.print_exc()
        sys.stderr.flush()
        print("LOCKGUARD-SMOKE:" + json.dumps({"module": name, "ok": False}), flush=True)
        sys.exit(1)
    print("LOCKGUARD-SMOKE:" + json.dumps({"module": name, "ok": True}), flush=True)
"""


@dataclass
class SmokeResult:
    ok: bool
    imported: list[str]
    failed: str | None = None  # the module that did not import
    detail: str = ""  # stderr's tail, or why nothing could be said

    @property
    def command(self) -> str:
        return f'python -I -c "import {self.failed}"' if self.failed else ""


def smoke_timeout() -> float:
    try:
        return float(os.environ.get("LOCKGUARD_SMOKE_TIMEOUT", "900"))
    except ValueError:
        return 900.0


def run_smoke(python: str, modules: list[str], cwd: str, on_import=None) -> SmokeResult:
    """`on_import(module)` is called as each module imports (for progress)."""
    if not modules:
        return SmokeResult(True, [])
    timeout = smoke_timeout()

    def line(text: str) -> None:
        if on_import is not None and text.startswith(_MARK) and '"ok": true' in text:
            on_import(text[len(_MARK) :].split('"module": "', 1)[-1].split('"', 1)[0])

    done = run_bounded(
        [python, "-I", "-B", "-c", _SCRIPT, *modules],
        timeout=timeout,
        cwd=cwd,
        cap=8 << 20,
        stderr_cap=8 << 20,
        on_line=line,
        die_with_lockguard=True,
    )
    if done.returncode is None:
        return SmokeResult(False, [], modules[0], f"cannot run {python}: {done.start_error}")
    imported = []
    for text in done.stdout.splitlines():
        if text.startswith(_MARK):
            try:
                item = json.loads(text[len(_MARK) :])
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("ok"):
                imported.append(str(item.get("module")))
    if done.returncode == 0 and not done.timed_out and len(imported) == len(modules):
        return SmokeResult(True, imported)
    failed = next((m for m in modules if m not in imported), modules[-1])
    if done.timed_out:
        detail = f"it did not finish within {timeout:g} s and was stopped"
    elif done.returncode < 0:
        detail = f"the interpreter was killed by signal {-done.returncode}\n{done.stderr_tail(15)}"
    else:
        detail = done.stderr_tail(15)
    return SmokeResult(False, imported, failed, detail)
