"""Alternated rounds of find, the base tree's inventory and this tree's (memo warm and cold), with
and without a lock, on an existing prefix: wall and CPU (wait4 rusage: the process and its
children).

    python bench/inventory_rounds.py PREFIX BASE_TREE [--rounds 11]

BASE_TREE holds the reference `lockguard/` package (byte-compile it first); both run with this
interpreter, without PYTHONDONTWRITEBYTECODE, each with its own LOCKGUARD_CACHE_DIR, in a neutral
working folder (`python -c` puts the working folder first on sys.path: run from a checkout, both
would import the checkout's lockguard)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CODE = (
    "import sys; from pathlib import Path; from lockguard.io.env.prefix_scan import scan_prefix; "
    "from lockguard.install.inventory import take_inventory, LockView; "
    "lock = LockView(pip={'pkg0001': '1.0', 'torch': '2.1.0'}, cuda='12.1', "
    "nccl='2.18.1', cudnn='8.9.2') "
    "if sys.argv[2] == 'lock' else None; take_inventory(scan_prefix(Path(sys.argv[1])), lock)"
)


def run(argv: list[str], env: dict | None) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    assert status == 0, argv
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("prefix")
    parser.add_argument("base")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    args.prefix = os.path.abspath(args.prefix)
    work = tempfile.mkdtemp(prefix="lockguard-rounds-")
    plain = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    main_env = {
        **plain,
        "PYTHONPATH": os.path.abspath(args.base),
        "LOCKGUARD_CACHE_DIR": f"{work}/main",
    }
    warm = {**plain, "LOCKGUARD_CACHE_DIR": f"{work}/warm"}
    cold = {**plain, "LOCKGUARD_CACHE_DIR": f"{work}/cold"}
    commands = {"find": (["find", args.prefix, "-name", "*.so*"], None)}
    for lock in ("none", "lock"):
        label = " +lock" if lock == "lock" else ""
        scan = [sys.executable, "-c", CODE, args.prefix, lock]
        commands |= {
            f"main{label}": (scan, main_env),
            f"branch warm{label}": (scan, warm),
            f"branch cold{label}": (scan, cold),
        }
    try:
        for argv, env in commands.values():  # the page cache and the warm memos
            run(argv, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        loads = [os.getloadavg()[0]]
        for _ in range(args.rounds):
            for name, (argv, env) in commands.items():
                if name.startswith("branch cold"):
                    shutil.rmtree(f"{work}/cold", ignore_errors=True)
                times[name].append(run(argv, env))
            loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    find_best = min(w for w, _ in times["find"])
    find_median = statistics.median(w for w, _ in times["find"])
    print(
        f"{args.rounds} alternated rounds; 1-minute load average {min(loads):.2f}-{max(loads):.2f}"
    )
    print(
        "| command | best wall s | median wall s | median CPU s | vs find (best / median) |\n"
        "|---|---|---|---|---|"
    )
    for name, values in times.items():
        walls = [w for w, _ in values]
        print(
            f"| {name} | {min(walls):.3f} | {statistics.median(walls):.3f} | "
            f"{statistics.median(c for _, c in values):.3f} | {min(walls) / find_best:.2f}x / "
            f"{statistics.median(walls) / find_median:.2f}x |"
        )


if __name__ == "__main__":
    main()
