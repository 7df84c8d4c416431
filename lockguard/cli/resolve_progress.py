"""What a resolve says while it works (issue 25): on a terminal one live line with the phase and
the counts (index pages, metadata read, sdists being built); without a terminal (a CI log) one
line per phase and one per sdist build, which can take minutes, so a log never goes silent.
Nothing with --json (the summary on stdout is all).

The counts are read from the HTTP client and the metadata fetchers by a small thread that
refreshes the live line twice a second; the resolve itself never waits on this."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from lockguard.cli.output import Ui, color_enabled
from lockguard.model.wording import counted

REFRESH_SECONDS = 0.5


class ResolveProgress:
    def __init__(self, ui: Ui, counts: Callable[[], tuple[int, int]] = lambda: (0, 0)) -> None:
        """`counts()` -> (requests made, metadata read) so far."""
        self.ui = ui
        self.counts = counts
        self.live = color_enabled(sys.stderr) and not ui.json_mode
        self.quiet = ui.json_mode
        self._phase = ""
        self._builds: dict[str, float] = {}  # sdist file name -> when its build started
        self._steps: dict[str, str] = {}  # sdist file name -> what its build does now
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ResolveProgress:
        if self.live:
            self._thread = threading.Thread(
                target=self._refresh, name="lockguard-progress", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.ui.done()

    # -- what the resolve reports ------------------------------------------------------------

    def phase(self, text: str) -> None:
        """A step of the resolve ("linux-64: pip side (3 requirements)")."""
        with self._guard:
            self._phase = text
        if self.live:
            self._show()
        elif not self.quiet:
            self._line(f"resolving {text}")

    def build(self, event: str, filename: str, detail: str = "") -> None:
        """An sdist's PEP 517 metadata build: "start", its phases ("env" creating or reusing the
        build environment, "install" its requirements, "prepare" the hook) with what they do,
        then "end" or "failed". Each phase says how long the build has run so far."""
        with self._guard:
            if event == "start":
                self._builds[filename] = time.monotonic()
            started = self._builds.get(filename)
            if event in ("end", "failed"):
                self._builds.pop(filename, None)
                self._steps.pop(filename, None)
            elif event != "start":
                self._steps[filename] = detail
        if self.live:
            self._show()
            return
        if self.quiet:
            return
        took = f"{time.monotonic() - started:.1f} s" if started is not None else "?"
        if event == "start":
            self._line(
                f"building the metadata of {filename} (an sdist whose dependencies only its build "
                "knows; this can take minutes)"
            )
        elif event == "end":
            self._line(f"built the metadata of {filename} in {took}")
        elif event == "failed":
            self._line(f"the metadata build of {filename} failed after {took}")
        else:
            self._line(f"  {filename} [{took}]: {detail}")

    # -- the live line -----------------------------------------------------------------------

    def status_text(self) -> str:
        requests, metadata = self.counts()
        with self._guard:
            phase, builds, steps = self._phase, dict(self._builds), dict(self._steps)
        parts = [counted(requests, "request"), f"{metadata:,} metadata read"]
        if builds:
            name, started = min(builds.items(), key=lambda item: item[1])
            more = f" and {len(builds) - 1} more" if len(builds) > 1 else ""
            step = f": {steps[name]}" if name in steps else ""
            parts.append(f"building {name}{more} ({time.monotonic() - started:.0f} s{step})")
        return f"resolving {phase or '...'}: " + ", ".join(parts)

    def _refresh(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            self._show()

    def _show(self) -> None:
        self.ui.progress(self.status_text())

    def _line(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)
