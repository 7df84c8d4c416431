"""How commands speak: data on stdout, messages on stderr, a versioned JSON envelope.

Colour only on a terminal and never with NO_COLOR; rich is imported only when it will draw.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from lockguard import __version__

JSON_SCHEMA_VERSION = 1


def color_enabled(stream) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


class Ui:
    # a plain class, not a value: it holds the command's changing state (the status line)
    def __init__(self, command: str = "", json_mode: bool = False, verbose: int = 0) -> None:
        self.command = command
        self.json_mode = json_mode
        self.github_mode = False  # `check --format github`: an error that stops it is annotated too
        self.verbose = verbose
        # as given: the key of the check's result memo
        self.command_line: tuple[str, ...] | None = None
        self._status: StatusLine | None = None

    def __repr__(self) -> str:
        return (
            f"Ui(command={self.command!r}, json_mode={self.json_mode!r}, verbose={self.verbose!r})"
        )

    # -- progress (stderr): one status line on a terminal, plain lines with -v elsewhere ----------

    def progress(self, message: str) -> None:
        if color_enabled(sys.stderr) and not self.json_mode:
            if self._status is None:
                self._status = StatusLine(message)
            else:
                self._status.update(message)
        elif self.verbose:
            print(message, file=sys.stderr)

    def done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    # -- messages (stderr) ---------------------------------------------------------------------

    def info(self, message: str) -> None:
        print(message, file=sys.stderr)

    def debug(self, message: str) -> None:
        if self.verbose:
            print(message, file=sys.stderr)

    def warn(self, message: str) -> None:
        print(self._style(f"warning: {message}", "yellow"), file=sys.stderr)

    def _style(self, text: str, color: str) -> str:
        if not color_enabled(sys.stderr):
            return text
        codes = {"red": "31", "yellow": "33", "green": "32", "bold": "1", "dim": "2"}
        return f"\033[{codes[color]}m{text}\033[0m"

    # -- data (stdout) -------------------------------------------------------------------------

    def envelope(
        self, data: object, *, ok: bool = True, error: dict | None = None, exit_code: int = 0
    ) -> dict:
        body: dict = {
            "schema": JSON_SCHEMA_VERSION,
            "lockguard": __version__,
            "command": self.command,
            "ok": ok,
            "exit_code": exit_code,
        }
        if error is not None:
            body["error"] = error
        else:
            body["data"] = data
        return body

    def emit_json(self, data: object, *, ok: bool = True, exit_code: int = 0) -> None:
        import json  # --json only: json stays off the cached check's path

        text = json.dumps(
            self.envelope(data, ok=ok, exit_code=exit_code), indent=2, sort_keys=True, default=str
        )
        sys.stdout.write(text + "\n")

    def out(self, text: str = "") -> None:
        sys.stdout.write(text + "\n")

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None
    ) -> None:
        """A table on stdout: rich on a colour terminal, aligned plain text otherwise."""
        cells = [[("" if c is None else str(c)) for c in row] for row in rows]
        if color_enabled(sys.stdout):
            from rich.console import Console
            from rich.table import Table

            table = Table(title=title, title_justify="left", show_lines=False)
            for column in columns:
                table.add_column(column, overflow="fold")
            for row in cells:
                table.add_row(*row)
            Console().print(table)
            return
        if title:
            self.out(title)
        widths = [
            max(len(col), *(len(r[i]) for r in cells)) if cells else len(col)
            for i, col in enumerate(columns)
        ]
        self.out("  ".join(col.ljust(w) for col, w in zip(columns, widths, strict=True)).rstrip())
        self.out("  ".join("-" * w for w in widths))
        for row in cells:
            self.out("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())

    # -- errors --------------------------------------------------------------------------------

    def error(self, message: str, hint: str | None = None, details: Sequence[str] = ()) -> None:
        print(self._style("lockguard: error: ", "red") + message, file=sys.stderr)
        for line in details:
            print(f"  {line}", file=sys.stderr)
        if hint:
            print(self._style("  hint: ", "bold") + hint, file=sys.stderr)


class StatusLine:
    """The one status line on a terminal: rich's spinner, shown until stopped."""

    def __init__(self, message: str) -> None:
        from rich.console import Console  # rich only when it draws (the module note)

        self._status = Console(stderr=True).status(message)
        self._status.start()

    def update(self, message: str) -> None:
        self._status.update(message)

    def stop(self) -> None:
        self._status.stop()
