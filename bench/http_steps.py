"""Issue 31 §1: what each step of the HTTP client buys on a cold resolve, side by side with uv.

    python bench/http_steps.py [--rounds 3] [--before PATH] [--only NAME] [--uv PATH] [--write]

The steps, each a `lockguard` run on the same intents in the same rounds (the tools alternating,
so they share the network and the machine's load):
  before        --before PATH: a lockguard without them (main's, installed in a venv of its own)
  memo+bound    this build as it runs by default: one DNS lookup per host per run, at most 16
                requests per host, reused connections, HTTP/1.1
  +http2        this build with LOCKGUARD_HTTP2=1 (HTTP/2 where the index offers it; needs h2)
  N/host        --per-host N: memo+bound with LOCKGUARD_HTTP_PER_HOST=N (the bound's knee)
  uv            `uv pip compile --generate-hashes` (PyPI only: uv knows nothing of CUDA indexes)
Every run is cold: an empty LOCKGUARD_CACHE_DIR / UV_CACHE_DIR of its own. Wall-time medians per
intent and step, and the ratio to uv. Needs live PyPI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from resolve_vs_uv import timed  # noqa: E402

HERE = Path(__file__).resolve().parent
CUTOFF = "2026-11-28T00:00:00Z"  # the same answer every round
# name: (python, cuda, requirements)
INTENTS = {
    "torch 2.1 cu121 + transformers": ("3.11", "12.1", ["torch==2.1.*", "transformers==4.36.2"]),
    "torch 2.7 cu126": ("3.11", "12.6", ["torch==2.7.*"]),
    "HF fine-tune (torch 2.5 cu124)": (
        "3.11",
        "12.4",
        ["torch==2.5.*", "transformers", "accelerate", "peft", "datasets", "trl"],
    ),
    # the rest of issue 31's eight (each CUDA the one of PyPI's own torch build: the PyTorch index
    # is out of reach from the development VM)
    "seed: py3.9 torch 2.1 + deepspeed + transformers": (
        "3.9",
        "12.1",
        ["torch==2.1.*", "deepspeed==0.13.1", "transformers==4.36.2"],
    ),
    "vllm 0.8.5": ("3.11", "12.4", ["vllm==0.8.5"]),
    "jax 0.4.35 cuda12": ("3.11", "12.4", ["jax[cuda12]==0.4.35"]),
    "tensorflow 2.18": ("3.11", "none", ["tensorflow==2.18.*"]),
    "torch 2.2 + pandas": ("3.11", "12.1", ["torch==2.2.*", "pandas"]),
}


def write_inputs(folder: Path, python: str, cuda: str, requirements: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.in").write_text("\n".join(requirements) + "\n")
    (folder / "lockguard.toml").write_text(
        f'python = "{python}"\ncuda = "{cuda}"\nchannels = []\n'
        f'exclude-newer = "{CUTOFF}"\npip = {json.dumps(requirements)}\n'
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default=None, help="a lockguard without this round's steps")
    parser.add_argument("--lockguard", default=str(Path(sys.executable).parent / "lockguard"))
    parser.add_argument("--uv", default=str(Path(sys.executable).parent / "uv"))
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument(
        "--per-host", action="append", type=int, default=[], help="also memo+bound with N per host"
    )
    parser.add_argument("--no-h1", action="store_true", help="leave out the HTTP/1.1 step")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    steps: list[tuple[str, list[str], dict[str, str]]] = []
    if args.before:
        steps.append(("before", [args.before, "resolve"], {}))
    if not args.no_h1:
        steps.append(("memo+bound", [args.lockguard, "resolve"], {}))
    steps.append(("+http2", [args.lockguard, "resolve"], {"LOCKGUARD_HTTP2": "1"}))
    for n in args.per_host:
        steps.append(
            (f"{n}/host", [args.lockguard, "resolve"], {"LOCKGUARD_HTTP_PER_HOST": str(n)})
        )
    if Path(args.uv).exists():
        steps.append(("uv", [args.uv, "pip", "compile", "requirements.in", "-o", "uv.txt"], {}))
    chosen = {n: i for n, i in INTENTS.items() if not args.only or any(o in n for o in args.only)}
    walls: dict[str, dict[str, list[float]]] = {n: {s[0]: [] for s in steps} for n in chosen}
    cpus: dict[str, dict[str, list[float]]] = {n: {s[0]: [] for s in steps} for n in chosen}
    failures: list[str] = []
    for round_ in range(args.rounds):
        for name, (python, cuda, requirements) in chosen.items():
            for label, argv, extra in steps:
                work = Path(tempfile.mkdtemp(prefix="lockguard-bench-http-"))
                try:
                    write_inputs(work, python, cuda, requirements)
                    if label == "uv":
                        argv = argv + [
                            "--generate-hashes",
                            "--python-version",
                            python,
                            "--python-platform",
                            "x86_64-manylinux_2_28",
                            "--exclude-newer",
                            CUTOFF,
                            "--quiet",
                        ]
                    env = {
                        "LOCKGUARD_CACHE_DIR": str(work / "cache"),
                        "UV_CACHE_DIR": str(work / "uv-cache"),
                        "PIP_CACHE_DIR": str(work / "pip-cache"),
                        **extra,
                    }
                    wall, cpu, _peak, code, tail = timed(argv, work, env)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                print(
                    f"round {round_ + 1} {name} {label}: {wall:.2f} s cpu {cpu:.2f} s exit {code}",
                    flush=True,
                )
                if code:
                    failures.append(f"{name} {label}: exit {code} {tail[-200:]}")
                else:
                    walls[name][label].append(wall)
                    cpus[name][label].append(cpu)
    labels = [s[0] for s in steps]
    ratio_of = [label for label in labels if label != "uv"] if "uv" in labels else []
    header = ["intent"] + [f"{label} s" for label in labels] + [f"{x} / uv" for x in ratio_of]
    header += [f"{label} CPU s" for label in labels]
    table = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for name, by in walls.items():
        cpu = [f"{statistics.median(cpus[name][label] or [float('nan')]):.2f}" for label in labels]
        med = {label: statistics.median(v) if v else float("nan") for label, v in by.items()}
        cells = [
            f"{med[label]:.2f} ({', '.join(f'{x:.1f}' for x in by[label])})" for label in labels
        ]
        ratios = [f"{med[label] / med['uv']:.2f}x" for label in ratio_of]
        table.append(f"| {name} | " + " | ".join(cells + ratios + cpu) + " |")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (
        f"## http steps (bench/http_steps.py, {stamp})\n\n{machine()}; shared with other agents "
        f"(load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}).\n\n"
        f"Cold resolves, exclude-newer {CUTOFF}, {args.rounds} rounds with the steps alternating; "
        "wall-time medians (each round's time in brackets), CPU (user+sys) medians.\n\n"
        + "\n".join(table)
        + "\n"
    )
    if failures:
        text += "\nFailed runs (not in the medians):\n" + "".join(f"- {f}\n" for f in failures)
    print(text)
    if args.write:
        from resolve import replace_section

        replace_section(HERE / "RESULTS.md", "## http steps", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
