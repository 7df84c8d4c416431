"""The click group and the one error boundary that maps exceptions to exit codes.

Commands live one per module and load only when run, so `lockguard check` (run on every commit)
imports nothing it does not use.
"""

from __future__ import annotations

import importlib
import sys
import traceback

import click

from lockguard import __version__
from lockguard.cli.output import Ui
from lockguard.errors import EXIT_INTERNAL, InputError, LockguardError, Unsatisfiable

# command name -> (module, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("lockguard.cli.init_cmd", "init", "Write the intent (lockguard.toml or [tool.lockguard])."),
    "resolve": ("lockguard.cli.resolve_cmd", "resolve", "Resolve the intent into environment.yml, requirements.lock and conda-lock.yml."),
    "check": ("lockguard.cli.check_cmd", "check", "Reject drift: intent vs lock, hand edits, contradicting files, installed env."),
    "clean-install": ("lockguard.cli.clean_install_cmd", "clean_install", "Quarantine stale libraries, apply the lock, verify."),
    "restore": ("lockguard.cli.restore_cmd", "restore", "Undo a clean-install from its quarantine."),
    "doctor": ("lockguard.cli.doctor_cmd", "doctor", "Diagnose this machine and an environment against the lock."),
    "explain": ("lockguard.cli.explain_cmd", "explain", "Why a package is pinned at its version."),
    "constraints": ("lockguard.cli.constraints_cmd", "constraints", "Show or verify the compatibility knowledge."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _help = COMMANDS[name]
        return getattr(importlib.import_module(module), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # list commands from the table, without importing every command module for --help
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_m, _a, text) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lockguard")
@click.option("-v", "--verbose", count=True, help="More detail; tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, verbose: int) -> None:
    """lockguard: reproducible GPU Python environments.

    Locks conda and pip together, consistent across the CUDA stack (driver, toolkit, cuDNN, NCCL,
    compilers, GPU architectures); rejects drift; installs cleanly; diagnoses machines.
    """
    ui = ctx.ensure_object(Ui)
    ui.verbose = verbose


def main(argv: list[str] | None = None) -> None:
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code. The only place exceptions become exit codes."""
    ui = Ui()
    try:
        result = cli.main(args=argv, prog_name="lockguard", standalone_mode=False, obj=ui)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        ui.error("aborted")
        return 130
    except KeyboardInterrupt:
        ui.error("interrupted")
        return 130
    except LockguardError as exc:
        _report(ui, exc)
        return exc.exit_code
    except Exception as exc:  # the boundary: a bug in lockguard, never the user's fault
        if ui.json_mode:
            ui.emit_json(None, ok=False, exit_code=EXIT_INTERNAL)
        if ui.verbose:
            traceback.print_exc()
        ui.error(
            f"internal error: {type(exc).__name__}: {exc}",
            hint="this is a bug in lockguard; rerun with -v for the traceback and report it",
        )
        return EXIT_INTERNAL


def _report(ui: Ui, exc: LockguardError) -> None:
    if ui.json_mode:
        import json

        body = ui.envelope(None, ok=False, error=exc.to_dict(), exit_code=exc.exit_code)
        sys.stdout.write(json.dumps(body, indent=2, sort_keys=True, default=str) + "\n")
    if ui.verbose > 1:
        traceback.print_exc()
    details: list[str] = []
    if isinstance(exc, Unsatisfiable) and exc.conflicts:
        details.append("conflicting facts:")
        details += [f"  - {c.fact}" + (f"  ({c.source})" if c.source else "") for c in exc.conflicts]
    message = exc.message
    if isinstance(exc, InputError) and exc.location and exc.location not in message:
        message = f"{exc.location}: {message}"
    ui.error(message, exc.hint, details)
