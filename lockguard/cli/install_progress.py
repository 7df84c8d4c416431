"""How a long clean-install speaks while it works: one live status line on a terminal, plain lines
on stderr without one (CI logs), nothing with --json (only the summary on stdout)."""

from __future__ import annotations

import sys

from lockguard.cli.output import Ui, color_enabled


class Progress:
    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.live = color_enabled(sys.stderr) and not ui.json_mode

    def step(self, message: str) -> None:
        """A passing state ("installing torch 2.1.2 (3/45)")."""
        if self.ui.json_mode:
            return
        if self.live:
            self.ui.progress(message)
        else:
            print(message, file=sys.stderr, flush=True)

    def say(self, message: str) -> None:
        """A line that stays (what was done)."""
        if self.ui.json_mode:
            return
        self.ui.done()
        print(message, file=sys.stderr, flush=True)

    def warn(self, message: str) -> None:
        if self.ui.json_mode:
            return
        self.ui.done()
        self.ui.warn(message)

    def close(self) -> None:
        self.ui.done()
