"""Issue 31 §1, the CPU half: cold `lockguard resolve` of bench/http_steps.py's intents against
`uv pip compile`, wall and CPU, the tools alternating in every round, and the floor under a
resolve (Python's start-up, and the imports every cold resolve makes).

    python bench/resolve_cpu.py [--rounds 5] [--tool LABEL=EXECUTABLE ...] [--uv PATH]

Each --tool is a `lockguard` executable (e.g. main's and this branch's, each installed into a venv
of its own, not editable: an editable install's import finder costs ~0.08 s CPU per run). Every
run is cold (an empty LOCKGUARD_CACHE_DIR / UV_CACHE_DIR) in a fresh folder (no earlier lock).
CPU is user+sys of the child and its children (wait4). The floor rows: `python -c pass`, and a
fresh interpreter importing the modules that one cold resolve of the first intent had imported
when it exited (recorded with the first --tool's interpreter), nothing else. Needs live PyPI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from http_steps import CUTOFF, INTENTS, write_inputs  # noqa: E402
from resolve_vs_uv import timed  # noqa: E402

RECORD = (
    "import atexit, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sys.modules)))\n"
    "sys.argv[0] = 'lockguard'\n"
    "from lockguard.start import main\nmain()\n"
)
IMPORT_ALL = (
    "import importlib, sys\n"
    "for name in open(sys.argv[1]).read().split():\n"
    "    try:\n        importlib.import_module(name)\n"
    "    except Exception:\n        pass\n"
)


def python_of(executable: str) -> str:
    """The interpreter of a console script (its #! line)."""
    first = Path(executable).read_text(errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tool", action="append", default=[], help="LABEL=lockguard executable")
    parser.add_argument("--uv", default=str(Path(sys.executable).parent / "uv"))
    parser.add_argument("--only", action="append", default=None)
    args = parser.parse_args()
    tools = [tuple(t.split("=", 1)) for t in args.tool] or [
        ("lockguard", str(Path(sys.executable).parent / "lockguard"))
    ]
    chosen = {n: i for n, i in INTENTS.items() if not args.only or any(o in n for o in args.only)}
    labels = [label for label, _exe in tools] + ["uv"]
    wall: dict[str, dict[str, list[float]]] = {n: {x: [] for x in labels} for n in chosen}
    cpu: dict[str, dict[str, list[float]]] = {n: {x: [] for x in labels} for n in chosen}
    work = Path(tempfile.mkdtemp(prefix="lockguard-bench-cpu-"))
    try:
        python = python_of(tools[0][1])
        modules = work / "modules.txt"
        first = next(iter(chosen.values()))
        write_inputs(work / "record", *first)
        env = {"LOCKGUARD_CACHE_DIR": str(work / "record-cache")}
        subprocess.run(
            [python, "-c", RECORD, str(modules), "resolve"],
            cwd=work / "record",
            env={**os.environ, **env},
            capture_output=True,
            check=True,
        )
        floor = {"python -c pass": [python, "-c", "pass"]}
        floor["imports of a cold resolve"] = [python, "-c", IMPORT_ALL, str(modules)]
        floor_times: dict[str, list[tuple[float, float]]] = {k: [] for k in floor}
        for round_ in range(args.rounds):
            for label, argv in floor.items():
                seconds, used, _peak, _code, _tail = timed(argv, work, {})
                floor_times[label].append((seconds, used))
            for name, (py, cuda, requirements) in chosen.items():
                for label in labels:
                    folder = Path(tempfile.mkdtemp(prefix="run-", dir=work))
                    write_inputs(folder, py, cuda, requirements)
                    if label == "uv":
                        argv = [args.uv, "pip", "compile", "requirements.in", "-o", "uv.txt"]
                        argv += ["--generate-hashes", "--python-version", py, "--python-platform"]
                        argv += ["x86_64-manylinux_2_28", "--exclude-newer", CUTOFF, "--quiet"]
                    else:
                        argv = [dict(tools)[label], "resolve"]
                    env = {
                        "LOCKGUARD_CACHE_DIR": str(folder / "cache"),
                        "UV_CACHE_DIR": str(folder / "uv-cache"),
                    }
                    seconds, used, _peak, code, tail = timed(argv, folder, env)
                    shutil.rmtree(folder, ignore_errors=True)
                    print(f"round {round_ + 1} {name} {label}: {seconds:.2f} s, cpu {used:.2f} s")
                    if code:
                        print(f"  exit {code}: {tail}")
                        continue
                    wall[name][label].append(seconds)
                    cpu[name][label].append(used)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    head = ["intent"] + [f"{x} wall s" for x in labels] + [f"{x} CPU s" for x in labels]
    head += [f"{x} / uv wall" for x in labels[:-1]] + [f"{x} / uv CPU" for x in labels[:-1]]
    rows = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for name in chosen:
        w = {x: med(wall[name][x]) for x in labels}
        c = {x: med(cpu[name][x]) for x in labels}
        cells = [f"{w[x]:.2f}" for x in labels] + [f"{c[x]:.2f}" for x in labels]
        cells += [f"{w[x] / w['uv']:.2f}x" for x in labels[:-1]]
        cells += [f"{c[x] / c['uv']:.2f}x" for x in labels[:-1]]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    rows += ["", "| floor | median wall s | median CPU s |", "|---|---|---|"]
    for label, pairs in floor_times.items():
        rows.append(
            f"| {label} | {med([p[0] for p in pairs]):.3f} | {med([p[1] for p in pairs]):.3f} |"
        )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{machine()}; load average at the end {load}; {args.rounds} rounds\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
