"""What the doctor's probe reported from the target interpreter (io/machine/probe_runner.py runs
it; doctor/checks.py judges it)."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field


@dataclass
class ProbeResult:
    python: str
    base: dict = field(default_factory=dict)
    torch: dict | None = None
    smoke: list | None = None
    returncode: int = 0
    stderr_tail: str = ""

    @property
    def crashed(self) -> str | None:
        """How the probe died ('SIGSEGV', 'exit 3'), or None when it finished."""
        if self.returncode == 0 and self.base:
            return None
        if self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return f"exit {self.returncode}" if self.returncode else "no output"
