"""The `lockguard` command line: one error boundary, lazily loaded commands."""

import sys

from lockguard.cli.boundary import run


def main(argv: list[str] | None = None) -> None:
    sys.exit(run(sys.argv[1:] if argv is None else argv))


__all__ = ["main"]
