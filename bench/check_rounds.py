"""Alternated rounds of `label=command` pairs (the first is the yardstick): best and median wall
time, median CPU (wait4: the child and its children), each median against the first. Prints a
table; writes nothing (bench/before_after.sh puts two builds side by side with it).

    python bench/check_rounds.py ROUNDS "python -c pass=python -c pass" "check=lockguard check" ...
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import time


def once(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    rounds = int(sys.argv[1])
    commands = [
        (label, shlex.split(command))
        for label, _, command in (a.partition("=") for a in sys.argv[2:])
    ]
    for _label, argv in commands:
        once(argv)  # warm-up: the page cache, the result cache, the parse memo
    walls: dict[str, list[float]] = {label: [] for label, _ in commands}
    cpus: dict[str, list[float]] = {label: [] for label, _ in commands}
    for _ in range(rounds):
        for label, argv in commands:
            wall, cpu = once(argv)
            walls[label].append(wall)
            cpus[label].append(cpu)
    base = statistics.median(walls[commands[0][0]])
    print(
        "| command | best ms | median ms | median vs first | CPU median ms |\n|---|---|---|---|---|"
    )
    for label, _argv in commands:
        median = statistics.median(walls[label])
        print(
            f"| {label} | {min(walls[label]) * 1000:.1f} | {median * 1000:.1f} | "
            f"{median / base:.2f}x | {statistics.median(cpus[label]) * 1000:.1f} |"
        )


if __name__ == "__main__":
    main()
