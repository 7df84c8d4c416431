"""Time commands (best and median of N runs, warm file cache) and write a RESULTS.md section with
each one's ratio to the first. `label=command` pairs; the first is the baseline."""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--section", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--note", default="")
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    rows = []
    for item in args.commands:
        label, _, command = item.partition("=")
        argv = shlex.split(command)
        subprocess.run(argv, capture_output=True)  # warm-up (and fill any cache it keeps)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(argv, capture_output=True)
            times.append(time.perf_counter() - start)
        rows.append((label, min(times), statistics.median(times)))
        print(f"{label}: best {min(times) * 1000:.1f} ms, median {statistics.median(times) * 1000:.1f} ms", flush=True)
    base = rows[0][2]
    table = ["| command | best ms | median ms | median vs first |", "|---|---|---|---|"]
    table += [f"| {label} | {best * 1000:.1f} | {median * 1000:.1f} | {median / base:.2f}x |" for label, best, median in rows]
    text = (f"## {args.section} (bench/{args.section}.sh, {date.today()})\n\n{machine()}\n\n"
            + (args.note + "\n\n" if args.note else "") + "\n".join(table) + "\n")
    replace_section(Path(__file__).parent / "RESULTS.md", f"## {args.section}", text)
    print(text)


if __name__ == "__main__":
    main()
