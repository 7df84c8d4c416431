"""The `lockguard` console script (and `python -m lockguard`): SIGTERM and SIGHUP become
interrupts before anything heavy is imported, and an interrupt while the command's modules load
ends as any other does (exit 130, one line on stderr, no traceback). Kept tiny on purpose: what
runs before it (Python's own start-up and the launcher's first line) is all a signal can still
meet unhandled."""

import sys

from lockguard.interrupts import NOTHING_CHANGED, ignore_signals, raise_on_signals


def main(argv: list[str] | None = None) -> None:
    try:
        raise_on_signals()
        from lockguard.cli.boundary import run
    except KeyboardInterrupt:
        ignore_signals()
        sys.stderr.write(f"lockguard: {NOTHING_CHANGED}\n")
        sys.exit(130)
    try:
        code = run(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # one that came between the boundary's own steps
        ignore_signals()
        sys.stderr.write("lockguard: interrupted\n")
        sys.exit(130)
    ignore_signals()  # the command has ended: a late signal changes nothing, and says nothing
    sys.exit(code)
