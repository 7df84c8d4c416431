"""`lockguard doctor` (no --smoke) against bare Python start-up and against `import torch` alone:
wall time and CPU time (user + system, the command and its children) of each, best and median of
N runs. Targets (issue 11): without torch under 0.5 s; on a torch environment under 3 s, most of
it `import torch`. CPU time says what doctor costs when the machine is shared; wall time what a
user waits. Writes the "doctor" section of bench/RESULTS.md.

    .venv/bin/python bench/doctor.py [--torch-venv VENV] [--runs N]

torch is never installed here: pass a venv that has it (see bench/RESULTS.md for the one used).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from resolve import replace_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def measure(argv: list[str], runs: int, cwd: Path) -> tuple[float, float, float, float]:
    """(best wall, median wall, best cpu, median cpu) in seconds."""
    subprocess.run(argv, capture_output=True, cwd=cwd)  # warm the file cache
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, cwd=cwd)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), statistics.median(walls), min(cpus), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--torch-venv", type=Path)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    lockguard = str(bin_dir / "lockguard")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([sys.executable, "-m", "venv", str(work / "bare")], check=True)
        commands = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            (
                "lockguard doctor, no torch",
                [lockguard, "doctor", "--python", str(work / "bare" / "bin" / "python")],
            ),
        ]
        if args.torch_venv:
            python = str(args.torch_venv / "bin" / "python")
            commands += [
                ("python -c 'import torch'", [python, "-c", "import torch"]),
                ("lockguard doctor, torch", [lockguard, "doctor", "--python", python]),
            ]
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        rows = []
        # in a folder without lockguard.toml: the lock checks skip, as on a fresh node
        for label, argv in commands:
            best, median, cpu_best, cpu_median = measure(argv, args.runs, work)
            rows.append((label, best, median, cpu_best, cpu_median))
            print(
                f"{label}: wall best {best:.3f} s, median {median:.3f} s; "
                f"cpu median {cpu_median:.3f} s",
                flush=True,
            )
    table = [
        "| command | wall best s | wall median s | CPU median s | wall median vs previous row |",
        "|---|---|---|---|---|",
    ]
    for index, (label, best, median, _cpu_best, cpu_median) in enumerate(rows):
        ratio = f"{median / rows[index - 1][2]:.2f}x" if index % 2 else ""
        table.append(f"| {label} | {best:.3f} | {median:.3f} | {cpu_median:.3f} | {ratio} |")
    note = (
        "Targets: without torch under 0.5 s; with torch under 3 s (most of it `import torch`). "
        f"{args.runs} runs each, warm file cache, no lock in the folder. Load average at start: "
        f"{load} (other work shared the 2 CPUs: wall times are inflated by it, CPU times much "
        "less)."
    )
    text = (
        f"## doctor (bench/doctor.py, {date.today()})\n\n{machine()}\n\n{note}\n\n"
        + "\n".join(table)
        + "\n"
    )
    replace_section(REPO / "bench" / "RESULTS.md", "## doctor", text)
    print(text)


if __name__ == "__main__":
    main()
