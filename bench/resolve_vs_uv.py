"""The issue-15 resolve figure: `lockguard resolve` against `uv pip compile --generate-hashes` on
one intent (torch==2.1.*, deepspeed==0.13.1, transformers==4.36.2, no cut-off), cold and warm
cache, the tools alternating in every round; medians of wall and CPU time (user+sys of the child,
from wait4) and the peak RSS. Needs live PyPI.

    python bench/resolve_vs_uv.py [--rounds 3] [--lockguard PATH ...] [--uv PATH] [--write]

Several --lockguard executables (e.g. the main branch's and this one's) run in the same rounds,
so a before/after comparison shares the network and the machine's load. --write replaces the
"resolve vs uv" section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402

HERE = Path(__file__).resolve().parent
REQUIREMENTS = ["torch==2.1.*", "deepspeed==0.13.1", "transformers==4.36.2"]
DEEPSPEED = [
    "hjson",
    "ninja",
    "numpy",
    "packaging>=20.0",
    "psutil",
    "py-cpuinfo",
    "pydantic",
    "pynvml",
    "torch",
    "tqdm",
]


def write_inputs(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.in").write_text("\n".join(REQUIREMENTS) + "\n")
    metadata = (
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        f"requires-dist = {json.dumps(DEEPSPEED)}\n"
    )
    (folder / "lockguard.toml").write_text(
        f'python = "3.11"\ncuda = "12.1"\nchannels = []\npip = {json.dumps(REQUIREMENTS)}\n'
        + metadata
    )
    (folder / "uv.toml").write_text(metadata)


def timed(argv: list[str], cwd: Path, env: dict) -> tuple[float, float, float, int, str]:
    """(wall s, cpu s, peak MB, exit code, stderr tail) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        proc.returncode,
        err.decode(errors="replace")[-300:],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--lockguard", action="append", default=None, help="label=path or path (repeatable)"
    )
    parser.add_argument("--uv", default=str(Path(sys.executable).parent / "uv"))
    parser.add_argument(
        "--keep-lock", default=None, help="copy the first lockguard's requirements.lock here"
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    tools = []
    for item in args.lockguard or [str(Path(sys.executable).parent / "lockguard")]:
        label, _, path = item.rpartition("=")
        tools.append(
            (
                f"lockguard resolve{' (' + label + ')' if label else ''}",
                [os.path.abspath(path), "resolve"],
                "LOCKGUARD_CACHE_DIR",
            )
        )
    tools.append(
        (
            "uv pip compile --generate-hashes",
            [
                os.path.abspath(args.uv),
                "pip",
                "compile",
                "requirements.in",
                "-o",
                "uv.txt",
                "--generate-hashes",
                "--python-version",
                "3.11",
                "--python-platform",
                "x86_64-manylinux_2_28",
                "--quiet",
            ],
            "UV_CACHE_DIR",
        )
    )
    work = Path(tempfile.mkdtemp(prefix="lockguard-bench-vs-uv-"))
    write_inputs(work)
    runs: dict[str, dict[str, list]] = {label: {"cold": [], "warm": []} for label, _, _ in tools}
    try:
        for round_ in range(args.rounds):
            for label, argv, cache_var in tools:
                cache = work / "cache"
                shutil.rmtree(cache, ignore_errors=True)
                for kind in ("cold", "warm"):
                    result = timed(argv, work, {cache_var: str(cache)})
                    runs[label][kind].append(result)
                    print(
                        f"round {round_ + 1} {label} {kind}: wall {result[0]:.2f}s "
                        f"cpu {result[1]:.2f}s peak {result[2]:.0f} MB exit {result[3]}",
                        flush=True,
                    )
                    if result[3]:
                        print("   " + result[4])
                if (
                    args.keep_lock
                    and round_ == 0
                    and label == tools[0][0]
                    and (work / "requirements.lock").exists()
                ):
                    shutil.copy(work / "requirements.lock", args.keep_lock)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    uv = tools[-1][0]
    med = {
        label: {
            kind: (
                statistics.median(r[0] for r in rs),
                statistics.median(r[1] for r in rs),
                max(r[2] for r in rs),
            )
            for kind, rs in kinds.items()
        }
        for label, kinds in runs.items()
    }
    table = [
        "| tool | cold wall s | cold CPU s | warm wall s | warm CPU s | peak MB (cold) | "
        "cold wall vs uv | cold CPU vs uv |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, kinds in med.items():
        cold, warm = kinds["cold"], kinds["warm"]
        table.append(
            f"| {label} | {cold[0]:.2f} | {cold[1]:.2f} | {warm[0]:.2f} | {warm[1]:.2f} | "
            f"{cold[2]:.0f} | {cold[0] / med[uv]['cold'][0]:.2f}x | "
            f"{cold[1] / med[uv]['cold'][1]:.2f}x |"
        )
    text = (
        f"## resolve vs uv (bench/resolve_vs_uv.py, {date.today()})\n\n{machine()}\n\n"
        f"`{' '.join(REQUIREMENTS)}`, Python 3.11 linux x86_64, no cut-off, hashes; "
        f"{args.rounds} rounds, the "
        "tools alternating in each; medians (peak: the highest). Load average at the end: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.\n\n" + "\n".join(table) + "\n"
    )
    print(text)
    if args.write:
        from resolve import replace_section

        replace_section(HERE / "RESULTS.md", "## resolve vs uv", text)


if __name__ == "__main__":
    main()
