"""The floor under a warm clean-install (issue 32): what its guarantees cost on their own, each
timed alone in alternating rounds, for the lock bench/install_engines.py installs.

- lockguard's start-up and exit: importing what clean-install imports, then exiting;
- the engine: uv with the argv clean-install's engine runs (local files, --no-index), into a fresh
  venv, warm uv cache, with `--link-mode copy` (what clean-install runs: a file edited in the
  prefix must not edit uv's cache) and with uv's default hard links (what plain uv does);
- the import smoke: `python -I -B -c "import <modules>"` in a fresh install (no bytecode: what the
  smoke meets right after uv, which compiles none) and again with bytecode present (the import
  alone); and the interpreter's bare start.

    python bench/install_floor.py --project PATH --modules requests,numpy [--rounds 7]

Run it with the lockguard build to measure (its interpreter); LOCKGUARD_CACHE_DIR must hold the
lock's files (run bench/install_engines.py or one clean-install first). Prints a table."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(argv: list[str], **kwargs) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def install_txt(project: Path, work: Path) -> Path:
    """The install.txt a clean-install of the project writes (its quarantine keeps it)."""
    target = work / "seed"
    subprocess.run([PYTHON_BASE, "-m", "venv", "--without-pip", str(target)], check=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lockguard",
            "clean-install",
            "--intent",
            str(project / "lockguard.toml"),
            "--prefix",
            str(target),
            "--yes",
        ],  # fmt: skip
        check=True,
        capture_output=True,
        cwd=work,
    )
    (found,) = (target / ".lockguard" / "quarantine").glob("*/install.txt")
    return found


PYTHON_BASE = shutil.which("python3.11") or "python3"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--modules", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    import uv

    work = Path(tempfile.mkdtemp(prefix="lockguard-floor-"))
    env = {**os.environ, "UV_CACHE_DIR": str(work / "uv-cache"), "UV_NO_CONFIG": "1"}
    modules = args.modules.split(",")
    times: dict[str, list[float]] = {}
    try:
        requirements = install_txt(args.project.resolve(), work)
        target = work / "env"

        def fresh() -> None:
            shutil.rmtree(target, ignore_errors=True)
            subprocess.run([PYTHON_BASE, "-m", "venv", "--without-pip", str(target)], check=True)

        def engine(mode: str) -> float:
            fresh()
            return timed(
                [str(uv.find_uv_bin()), "pip", "install", "--no-config", "--no-deps",
                 "--require-hashes", "--python", str(target / "bin" / "python"), "--link-mode",
                 mode, "--no-compile-bytecode", "--no-progress", "-r", str(requirements)],
                env=env,
            )  # fmt: skip

        def smoke(bytecode: bool) -> float:
            python = str(target / "bin" / "python")
            if bytecode:  # written by a first import, then timed
                timed([python, "-I", "-c", f"import {', '.join(modules)}"])
            return timed([python, "-I", "-B", "-c", f"import {', '.join(modules)}"])

        steps = {
            "interpreter start (python -I -c pass)": lambda: timed(
                [str(target / "bin" / "python"), "-I", "-c", "pass"]
            ),
            "lockguard start-up and exit (clean-install's imports)": lambda: timed(
                [
                    sys.executable,
                    "-c",
                    "import lockguard.cli.commands, lockguard.cli.clean_install_cmd",
                ],
                cwd=work,  # fmt: skip
            ),
            "uv, --link-mode copy (clean-install's engine)": lambda: engine("copy"),
            "uv, --link-mode hardlink (uv's default)": lambda: engine("hardlink"),
            "import smoke, no bytecode (right after uv)": lambda: smoke(False),
            "the same imports with bytecode": lambda: smoke(True),
        }
        engine("copy")  # uv unpacks the wheels into its cache once, not counted
        for i in range(args.rounds):
            names = list(steps)
            for name in names[i % len(names) :] + names[: i % len(names)]:
                if name.startswith("import smoke") or name.startswith("the same"):
                    engine("copy")  # a fresh install for the smoke
                times.setdefault(name, []).append(steps[name]())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"| step ({', '.join(modules)}; median of {args.rounds}) | median s | min s |")
    print("|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} |")


if __name__ == "__main__":
    main()
