"""Shared helpers for the benchmarks: run a command, time it, its peak memory and network bytes."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def rx_bytes() -> int:
    """Bytes received on all non-loopback interfaces (machine-wide; keep the machine quiet)."""
    total = 0
    for line in Path("/proc/net/dev").read_text().splitlines()[2:]:
        name, data = line.split(":", 1)
        if name.strip() != "lo":
            total += int(data.split()[0])
    return total


@dataclass
class Run:
    label: str
    seconds: float
    peak_mb: float
    fetched_mb: float
    code: int
    tail: str = ""


def run(
    label: str,
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict | None = None,
    timeout: int = 1800,
) -> Run:
    before_rx = rx_bytes()
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-f", "%M", *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=timeout)
    seconds = time.perf_counter() - start
    fetched = rx_bytes() - before_rx
    lines = err.strip().splitlines()
    peak_kb = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return Run(
        label,
        seconds,
        peak_kb / 1024,
        fetched / 1e6,
        proc.returncode,
        (out + "\n".join(lines[:-1]))[-400:],
    )


def machine() -> str:
    cpus = os.cpu_count()
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // (1024 * 1024)
    return (
        f"{platform.node() or 'host'}: {platform.machine()}, {cpus} CPUs, {mem} GiB RAM, "
        f"Python {platform.python_version()}"
    )
