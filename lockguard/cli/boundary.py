"""The one error boundary: every exception becomes an exit code and a message, never a traceback
for a user error (`-v` shows one for internal errors).

A command line that an identical earlier `lockguard check` answered is answered again before
click is imported (app/check_replay.py): click costs as much as Python's own start-up, and a
repeated check (the pre-commit path) must stay under two start-ups.
"""

from __future__ import annotations

import sys

from lockguard import interrupts
from lockguard.cli.output import Ui
from lockguard.errors import EXIT_INTERNAL, InputError, LockguardError

EXIT_INTERRUPTED = 130  # the shell's 128 + SIGINT, for SIGTERM and SIGHUP too


def run(argv: list[str]) -> int:
    # the console script raised on SIGTERM/SIGHUP already (lockguard/start.py); an in-process run
    # (the tests) gets the same handlers, given back when it ends
    handlers = interrupts.raise_on_signals()
    interrupts.now(interrupts.NOTHING_CHANGED)
    ui = Ui()
    ui.command_line = tuple(argv)
    try:
        return _run(argv, ui)
    finally:
        interrupts.put_back(handlers)


def _run(argv: list[str], ui: Ui) -> int:
    try:
        _tolerant_streams()
        answered = _answered_before(argv, ui)
        if answered is not None:
            return answered
        from lockguard.cli.commands import invoke

        return invoke(argv, ui)
    except KeyboardInterrupt:  # SIGINT, SIGTERM, SIGHUP (lockguard/interrupts.py)
        return interrupted(ui)
    except LockguardError as exc:
        ui.done()
        report(ui, exc)
        return exc.exit_code
    except Exception as exc:  # a bug in lockguard, never the user's fault
        if ui.json_mode:
            ui.emit_json(None, ok=False, exit_code=EXIT_INTERNAL)
        if ui.verbose:
            # only here: its import (tokenize, linecache) costs a third of a start-up
            import traceback

            traceback.print_exc()
        ui.error(
            f"internal error: {type(exc).__name__}: {exc}",
            hint="this is a bug in lockguard; rerun with -v for the traceback and report it",
        )
        return EXIT_INTERNAL


def interrupted(ui: Ui) -> int:
    """Exit 130 with one line on stderr: what state the prefix or project is in, and the command
    that finishes or undoes it (each session keeps it current: lockguard/interrupts.py)."""
    handlers = interrupts.ignore_signals()  # a second Ctrl-C must not cut this line short
    try:
        ui.done()
        line = interrupts.state_line()
        if ui.json_mode:
            import json

            body = ui.envelope(
                None,
                ok=False,
                error={"kind": "interrupted", "message": line},
                exit_code=EXIT_INTERRUPTED,
            )
            sys.stdout.write(json.dumps(body, indent=2, sort_keys=True) + "\n")
        # on a terminal the line starts below the terminal's own "^C"
        lead = "\n" if sys.stderr.isatty() else ""
        print(f"{lead}lockguard: {line}", file=sys.stderr)
    finally:
        interrupts.put_back(handlers)
    return EXIT_INTERRUPTED


def _answered_before(argv: list[str], ui: Ui) -> int | None:
    """The exit code of an identical earlier check whose files are unchanged (its output printed
    again), or of a plain check whose lock set proves itself, else None."""
    from lockguard.app.check_replay import earlier_check, replay

    earlier = earlier_check(argv)
    if earlier is None:
        return _proven_before_click(argv, ui)
    ui.command, ui.json_mode = "check", earlier.json  # a busy lock set with --no-wait: its envelope
    code = replay(earlier, on_wait=ui.info, warn=ui.warn)
    if code is None:
        ui.command, ui.json_mode = "", False
        return _proven_before_click(argv, ui)
    return code


def plain_check(argv: list[str]) -> tuple[str | None, bool] | None:
    """(--intent, --no-cache) of `check [--intent PATH] [--no-cache]` in any order (the
    pre-commit hook's and CI's command line), else None: click reads every other one."""
    if not argv or argv[0] != "check":
        return None
    intent: str | None = None
    no_cache = False
    rest = argv[1:]
    while rest:
        token, rest = rest[0], rest[1:]
        if token == "--no-cache" and not no_cache:
            no_cache = True
        elif token == "--intent" and intent is None and rest and not rest[0].startswith("-"):
            intent, rest = rest[0], rest[1:]
        elif token.startswith("--intent=") and intent is None:
            intent = token.partition("=")[2]
        else:
            return None
    return intent, no_cache


def _proven_before_click(argv: list[str], ui: Ui) -> int | None:
    """A plain check whose lock set proves itself (app/check_session.py's first tier), answered
    without click (as long as Python's start-up): exit 0, its line printed and, without
    --no-cache, kept for the replay. None: the command runs (the full check decides)."""
    plain = plain_check(argv)
    if plain is None:
        return None
    from lockguard.app.check_session import project_lock, proof_check, remember
    from lockguard.check.render import text

    intent_path, no_cache = plain
    ui.command = "check"
    with project_lock(intent_path, wait=True, on_wait=ui.info, warn=ui.warn):
        checked = proof_check(intent_path, warn=ui.warn)
        if checked is None:
            ui.command = ""
            return None
        output = text(list(checked.findings), checked=checked.shown)
        sys.stdout.write(output)
        if not no_cache:
            remember(
                tuple(argv), checked, intent_path, wait=True, json=False, output=output, code=0
            )
    return 0


def _tolerant_streams() -> None:
    """A file name that is not UTF-8 (a byte the file system allows) is shown escaped, never a
    UnicodeEncodeError in the middle of a report."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (contextlib imports collections: the cached check path avoids it)
            # a TextIOWrapper's method; sys.stdout is typed TextIO (another stream: AttributeError
            # below)
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # a stream that cannot: left as it is
            pass


def report(ui: Ui, exc: LockguardError) -> None:
    if ui.json_mode:
        import json

        body = ui.envelope(None, ok=False, error=exc.to_dict(), exit_code=exc.exit_code)
        sys.stdout.write(json.dumps(body, indent=2, sort_keys=True, default=str) + "\n")
    if ui.verbose > 1:
        import traceback

        traceback.print_exc()
    if ui.github_mode:
        sys.stdout.write(_annotation(exc))
    details = exc.details()
    message = exc.message
    if isinstance(exc, InputError) and exc.location and exc.location not in message:
        message = f"{exc.location}: {message}"
    ui.error(message, exc.hint, details)


def _annotation(exc: LockguardError) -> str:
    """The error as a GitHub annotation: a CI log's summary shows it, not only its stderr."""
    from lockguard.app.check_session import annotation_folders
    from lockguard.check.render import github_error

    message = exc.message + (f" (hint: {exc.hint})" if exc.hint else "")
    file = exc.file if isinstance(exc, InputError) else None
    line = exc.line if isinstance(exc, InputError) else None
    cwd, root = annotation_folders()
    return github_error(message, file=file, line=line, cwd=cwd, root=root)
