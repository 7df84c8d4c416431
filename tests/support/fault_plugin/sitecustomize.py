"""The tests' fault-injection seam for lockguard run as a child process: put this folder on the
child's PYTHONPATH and describe the faults in LOCKGUARD_TEST_FAULTS (JSON list). Production code
holds no fault switches; this wraps its functions from outside, before the command imports them.

Each fault: {"target": "lockguard.io.env.quarantine:move_file", "call": 3, "when": "before",
             "action": "exit" | "pause" | "raise" | "signal", ...}
- exit: os._exit(code, default 9) on the Nth call (a SIGKILL-like death: no cleanup runs);
- pause: on the Nth call write `<dir>/paused-<name>` and wait (up to 120 s) for `<dir>/go-<name>`:
  a race the test makes certain, not timed (tests/support/faults.py has the test side);
- raise: raise OSError(errno, strerror, filename) on the Nth call (ENOSPC, EACCES, ...);
- signal: send the process `signum` (SIGTERM 15, SIGINT 2) on the Nth call, then carry on.
"when": "before" (default) or "after" the real call. Calls are counted per target from 1.
A process without lockguard importable (pip in the target venv) ignores the seam.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import time


def _install() -> None:
    spec = os.environ.get("LOCKGUARD_TEST_FAULTS")
    if not spec:
        return
    for fault in json.loads(spec):
        module_name, _, attribute = fault["target"].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return  # not a lockguard process
        owner = module
        *parents, name = attribute.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, _wrap(getattr(owner, name), fault))


def _wrap(real, fault: dict):
    calls = {"n": 0}
    target_call = int(fault.get("call", 1))
    after = fault.get("when", "before") == "after"

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        calls["n"] += 1
        hit = calls["n"] == target_call
        if hit and not after:
            _act(fault)
        result = real(*args, **kwargs)
        if hit and after:
            _act(fault)
        return result

    return wrapper


def _act(fault: dict) -> None:
    action = fault["action"]
    if action == "exit":
        os._exit(int(fault.get("code", 9)))
    if action == "raise":
        number = int(fault.get("errno", 28))
        raise OSError(number, fault.get("strerror") or os.strerror(number), fault.get("filename"))
    if action == "signal":
        os.kill(os.getpid(), int(fault.get("signum", signal.SIGTERM)))
        return
    if action == "pause":
        folder, name = fault["dir"], fault.get("name", "fault")
        with open(os.path.join(folder, f"paused-{name}"), "w") as handle:
            handle.write(str(os.getpid()))
        go = os.path.join(folder, f"go-{name}")
        deadline = time.monotonic() + float(fault.get("timeout", 120))
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
        return
    raise ValueError(f"unknown fault action {action!r}")


_install()
