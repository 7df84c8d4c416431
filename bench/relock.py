"""Benchmark a relock after adding one package (issue 21): it must cost about a warm resolve plus
that package's pages, far less than a cold resolve. Needs network (live PyPI). Writes
bench/RESULTS.md's relock section.

Per round, in a fresh cache: a cold resolve of the intent; a warm resolve (answered by the
resolution memo); a warm resolve without the memo (its entries deleted: the resolver runs on cached
pages and metadata); then one package added to the intent and the relock timed (the memo cannot
answer: the intent changed). lockguard's own `-v` line "fetched X MB in N requests" says what each
one asked the network for.

    python bench/relock.py [--rounds 3] [--add six]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from resolve import INTENTS, replace_section, write_inputs  # noqa: E402

HERE = Path(__file__).resolve().parent
FETCHED = re.compile(r"fetched ([0-9.]+) MB in (\d+) requests")


@dataclass
class Timed:
    seconds: float
    code: int
    stderr: str


def run(argv: list[str], *, cwd: Path, env: dict) -> Timed:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800
    )
    return Timed(time.perf_counter() - start, proc.returncode, proc.stderr)


def fetched(stderr: str) -> tuple[float, int]:
    """lockguard's own count (-v); a run the memo answered fetched nothing."""
    found = FETCHED.findall(stderr)
    return (float(found[-1][0]), int(found[-1][1])) if found else (0.0, 0)


def lock_pins(folder: Path) -> dict[str, str]:
    return {
        m.group(1): m.group(2)
        for m in re.finditer(
            r"^([a-z0-9][a-z0-9._-]*)==(\S+?)(?: \\)?$",
            (folder / "requirements.lock").read_text(),
            re.M,
        )
    }


def one_round(lockguard: Path, requirements: list[str], added: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="lockguard-bench-relock-"))
    cache = work / "cache"
    env = {"LOCKGUARD_CACHE_DIR": str(cache)}
    argv = [str(lockguard), "-v", "resolve"]
    write_inputs(work, requirements)
    out = {"cold": run(argv, cwd=work, env=env)}
    before = lock_pins(work)
    out["warm, memo"] = run(argv, cwd=work, env=env)
    # the resolver runs again, on cached pages and metadata
    for folder in cache.rglob("resolutions"):
        shutil.rmtree(folder)
    out["warm, no memo"] = run(argv, cwd=work, env=env)
    locked = (work / "requirements.lock").read_bytes()
    write_inputs(work, [*requirements, added])
    out[f"relock + {added}"] = run(argv, cwd=work, env=env)
    after = lock_pins(work)
    # the same relock again, from the same lock, with the new package's page and metadata cached:
    # what the relock costs without the network
    (work / "requirements.lock").write_bytes(locked)
    for folder in cache.rglob("resolutions"):
        shutil.rmtree(folder)
    out[f"relock + {added}, its pages cached"] = run(argv, cwd=work, env=env)
    kept = all(after.get(name) == version for name, version in before.items())
    out["kept"] = kept and set(after) - set(before) >= {added}
    out["new names"] = sorted(set(after) - set(before))
    shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--add", default="six", help="the package the relock adds")
    parser.add_argument("--tools", default=None, help="a venv bin/ with lockguard")
    args = parser.parse_args()
    tools = Path(args.tools) if args.tools else Path(sys.executable).parent
    requirements = INTENTS["small"]
    rounds = []
    for number in range(args.rounds):
        found = one_round(tools / "lockguard", requirements, args.add)
        rounds.append(found)
        print(
            f"round {number + 1}: "
            + "; ".join(
                f"{k} {v.seconds:.2f}s (exit {v.code})"
                for k, v in found.items()
                if hasattr(v, "seconds")
            )
            + f"; pins kept: {found['kept']}",
            flush=True,
        )
    labels = [k for k, v in rounds[0].items() if hasattr(v, "seconds")]
    median = {label: statistics.median(r[label].seconds for r in rounds) for label in labels}
    relock = f"relock + {args.add}"
    table = [
        "| run | median s | runs s | fetched (lockguard -v) | vs cold | vs warm, no memo |",
        "|---|---|---|---|---|---|",
    ]
    for label in labels:
        mb, requests = fetched(rounds[-1][label].stderr)
        table.append(
            f"| {label} | {median[label]:.2f} | "
            f"{', '.join(f'{r[label].seconds:.2f}' for r in rounds)} | "
            f"{mb:.1f} MB, {requests} requests | {median[label] / median['cold']:.2f}x | "
            f"{median[label] / median['warm, no memo']:.2f}x |"
        )
    kept = all(r["kept"] for r in rounds)
    text = (
        f"## relock after adding one package (bench/relock.py, {date.today()})\n\n{machine()}\n\n"
        f"Intent `{' '.join(requirements)}` (Python 3.11, cuda 12.1, "
        f"exclude-newer as in bench/resolve.py), live PyPI, {args.rounds} rounds, each in a fresh "
        f"cache. The relock adds `{args.add}` to the intent "
        f"(the memo cannot answer: the intent changed); every earlier pin was kept in every round: "
        f"{'yes' if kept else 'NO'} (new names: {', '.join(rounds[-1]['new names'])}).\n\n"
        + "\n".join(table)
        + f"\n\nA relock costs {median[relock] / median['cold']:.2f}x a cold resolve and "
        f"{median[relock] / median['warm, no memo']:.2f}x a warm resolve without the memo "
        "(the resolver on cached pages and metadata), "
        f"{median[relock] / median['warm, memo']:.2f}x one the memo answers; "
        "what it fetched is the new package's page and metadata (the fetched column), and with "
        "those cached the same relock takes "
        f"{median[relock + ', its pages cached'] / median['warm, no memo']:.2f}x "
        "the warm resolve: the rest of a relock's cost is the network round trips (and the HTTP "
        "client they need) for that one package.\n"
    )
    replace_section(HERE / "RESULTS.md", "## relock after adding one package", text)
    print(text)


if __name__ == "__main__":
    main()
