"""The `lockguard` command line: one click group, lazily loaded commands, one error boundary."""

from lockguard.cli.app import main

__all__ = ["main"]
