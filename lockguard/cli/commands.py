"""The click group and the table of its commands; click's own usage errors become exit 2 here.

Commands live one per module and load only when run, so `lockguard check` (run on every commit)
imports nothing it does not use.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

import click

from lockguard import __version__
from lockguard.cli.output import Ui

# command name -> (module, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": (
        "lockguard.cli.init_cmd",
        "init",
        "Write the intent (lockguard.toml or [tool.lockguard]).",
    ),
    "resolve": (
        "lockguard.cli.resolve_cmd",
        "resolve",
        "Resolve the intent into environment.yml, requirements.lock and conda-lock.yml.",
    ),
    "diff": (
        "lockguard.cli.diff_cmd",
        "diff",
        "What changed between two locks, or since a git revision (CUDA stack first).",
    ),
    "outdated": (
        "lockguard.cli.outdated_cmd",
        "outdated",
        "Locked packages with newer allowed releases; what holds the others back.",
    ),
    "check": (
        "lockguard.cli.check_cmd",
        "check",
        "Reject drift: intent vs lock, hand edits, contradicting files, installed env.",
    ),
    "clean-install": (
        "lockguard.cli.clean_install_cmd",
        "clean_install",
        "Quarantine stale libraries, apply the lock, verify.",
    ),
    "restore": (
        "lockguard.cli.restore_cmd",
        "restore",
        "Undo a clean-install from its quarantine.",
    ),
    "doctor": (
        "lockguard.cli.doctor_cmd",
        "doctor",
        "Diagnose this machine and an environment against the lock.",
    ),
    "fleet": (
        "lockguard.cli.fleet_cmd",
        "fleet",
        "Run doctor on every node (Ray, Slurm, ClusterShell, Kubernetes); merge the reports.",
    ),
    "export": (
        "lockguard.cli.export_cmd",
        "export",
        "The lock as an SBOM (CycloneDX 1.6 JSON): purls, hashes, URLs, CUDA stack facts.",
    ),
    "explain": ("lockguard.cli.explain_cmd", "explain", "Why a package is pinned at its version."),
    "constraints": (
        "lockguard.cli.constraints_cmd",
        "constraints",
        "Show or verify the compatibility knowledge.",
    ),
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


def invoke(argv: list[str], ui: Ui) -> int:
    """Run the click group; click's own usage errors become exit 2 here. Everything else is
    handled by the boundary (lockguard.cli.boundary), which calls this."""
    try:
        # not cli.main(): it turns Ctrl-C into click.Abort after printing an empty line; an
        # interrupt goes to the boundary as it came, which says what state things are in
        with cli.make_context("lockguard", list(argv), obj=ui) as ctx:
            result = cli.invoke(ctx)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        if ui.json_mode or _asks_for_json(argv):  # a script reading stdout still gets an envelope
            ui.command = ui.command or (argv[0] if argv and not argv[0].startswith("-") else "")
            _emit_error_envelope(
                ui, {"kind": "usage", "message": exc.format_message()}, exc.exit_code
            )
        return exc.exit_code
    except BrokenPipeError:  # stdout's reader is gone (`| head`): quietly, as click's main does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except click.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # Ctrl-C at a question
            if not sys.stderr.isatty():  # the question's line ends (a terminal: the boundary)
                sys.stderr.write("\n")
            raise exc.__context__ from None
        ui.error("aborted")  # a question answered no
        return 130


def _asks_for_json(argv: list[str]) -> bool:
    pairs = zip(argv, argv[1:], strict=False)
    return (
        "--json" in argv
        or "--format=json" in argv
        or any(a == "--format" and b == "json" for a, b in pairs)
    )


def _emit_error_envelope(ui: Ui, error: dict, exit_code: int) -> None:
    body = ui.envelope(None, ok=False, error=error, exit_code=exit_code)
    sys.stdout.write(json.dumps(body, indent=2, sort_keys=True) + "\n")
