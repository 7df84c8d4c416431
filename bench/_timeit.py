"""Time commands (best and median of N runs, warm file cache) and write a RESULTS.md section with
each one's ratio to the first. `label=command` pairs; the first is the baseline.

The commands alternate (round after round, each command once per round), so a change of the
machine's load during the run touches all of them alike; next to the wall time each run's CPU
time (user + sys of the child, from wait4) is kept, which other work on a shared machine
disturbs much less."""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from resolve import replace_section  # noqa: E402


def once(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--section", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--note", default="")
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    commands = []
    for item in args.commands:
        label, _, command = item.partition("=")
        commands.append((label, shlex.split(command)))
    for _label, argv in commands:
        once(argv)  # warm-up (and fill any cache it keeps)
    walls: dict[str, list[float]] = {label: [] for label, _ in commands}
    cpus: dict[str, list[float]] = {label: [] for label, _ in commands}
    for _ in range(args.runs):
        for label, argv in commands:
            wall, cpu = once(argv)
            walls[label].append(wall)
            cpus[label].append(cpu)
    rows = [
        (label, min(walls[label]), statistics.median(walls[label]), statistics.median(cpus[label]))
        for label, _ in commands
    ]
    for label, best, median, cpu in rows:
        print(
            f"{label}: best {best * 1000:.1f} ms, median {median * 1000:.1f} ms, "
            f"CPU {cpu * 1000:.1f} ms",
            flush=True,
        )
    base_wall, base_cpu = rows[0][2], rows[0][3]
    table = [
        "| command | best ms | median ms | median vs first | CPU median ms | CPU vs first |",
        "|---|---|---|---|---|---|",
    ]
    table += [
        f"| {label} | {best * 1000:.1f} | {median * 1000:.1f} | {median / base_wall:.2f}x | "
        f"{cpu * 1000:.1f} | {cpu / base_cpu:.2f}x |"
        for label, best, median, cpu in rows
    ]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = (
        f"## {args.section} (bench/{args.section}.sh, {date.today()})\n\n{machine()}\n\n"
        + (args.note + "\n\n" if args.note else "")
        + f"{args.runs} rounds, the commands alternating; load average at the end: {load}.\n\n"
        + "\n".join(table)
        + "\n"
    )
    replace_section(Path(__file__).parent / "RESULTS.md", f"## {args.section}", text)
    print(text)


if __name__ == "__main__":
    main()
