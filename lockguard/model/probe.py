"""What the doctor's probe reported from the target interpreter (io/machine/probe_runner.py runs
it; doctor/checks.py judges it)."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ProbeResult:
    python: str
    # decoded JSON records from the probe (Any: JSON's values; doctor/checks.py checks each shape
    # it reads)
    base: dict[str, Any] = field(default_factory=dict)
    torch: dict[str, Any] | None = None  # {"state": "ok" | "broken" | "missing", ...torch's facts}
    smoke: list[dict[str, Any]] | None = None
    returncode: int = 0
    stderr_tail: str = ""
    # one per GPU package tried: dist, module, state, error, ...
    imports: list[dict[str, Any]] = field(default_factory=list)
    # the import under way when the output ended (it killed the process)
    importing: dict[str, Any] | None = None
    # records of the wrong shape, a timeout, no facts
    problems: list[str] = field(default_factory=list)
    # lines that are not JSON (a .pth that prints at start-up)
    noise: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def crashed(self) -> str | None:
        """How the probe died ('SIGSEGV', 'exit 3', 'timed out'), or None when it finished."""
        if self.timed_out:
            return "timed out"
        if self.returncode == 0 and self.base and not self.problems:
            return None
        if self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        if self.returncode:
            return f"exit {self.returncode}"
        return "output not understood" if self.problems or self.noise else "no output"
