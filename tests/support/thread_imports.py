"""Run a lockguard command with an audit hook that records every module a thread other than the
main one loads. Two threads importing at once can get a half-initialised module (CPython breaks an
import "deadlock" that way): in CI every early index thread died of `partially initialized module
'typing'` and the resolve waited for their answers for ever. So lockguard's threads import nothing;
the main thread imports what they need before they start (io/index/early.py)."""

from __future__ import annotations

import subprocess
import sys

MARK = "imported-by-thread: "  # how the script's lines stand out in the command's own output
_SCRIPT = """
import sys, threading
seen = []
def hook(event, args):
    if event == "import" and threading.current_thread() is not threading.main_thread():
        seen.append(threading.current_thread().name + ": " + args[0])
sys.addaudithook(hook)
from lockguard.cli.boundary import run
code = run(sys.argv[1:])
for line in seen:
    print(MARK + line)
sys.exit(code)
""".replace("MARK", repr(MARK))


def imports_by_threads(argv: list[str], env: dict, cwd=None) -> tuple[int, list[str], str]:
    """(exit code, "thread: module" for each module a non-main thread loaded, stderr)."""
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seen = [line[len(MARK) :] for line in done.stdout.splitlines() if line.startswith(MARK)]
    return done.returncode, seen, done.stderr
