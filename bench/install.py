"""clean-install of the example lock (examples/gpu-training: torch 2.1.2 cu121, deepspeed,
transformers; about 3 GB of wheels) into a fresh venv, against plain
`pip install --require-hashes --no-deps -r requirements.lock` into another fresh venv, with the
same warm pip cache; then `lockguard restore` of that run (until the environment is back, and until
the detached deletion of the removed files ends). Rounds alternate the order.

Goals (issue 10): clean-install <= 1.15x pip's wall time; restore under 10 s. clean-install does
more than pip (a transaction, a verify by effect and an import smoke of torch, deepspeed and
transformers); its phases are timed from its own progress lines. Writes its section of RESULTS.md.

Run it once with the network to warm pip's cache (the first round is not counted)."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
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
from resolve import replace_section  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gpu-training"
# a phase ends with the first progress line that matches its pattern
PHASES = (
    ("plan, quarantine, hard links", r"^downloading \d+ packages"),
    ("pip install", r"^installed \d+ packages with pip"),
    ("verify and import smoke", r"^verified:"),
)


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".lockguard")
        for name in sorted(dirs) + sorted(files):
            full = os.path.join(folder, name)
            info = os.lstat(full)
            h.update(f"{os.path.relpath(full, root)} {info.st_mode:o}".encode())
            if os.path.islink(full):
                h.update(os.readlink(full).encode())
            elif os.path.isfile(full):
                with open(full, "rb") as handle:
                    for chunk in iter(lambda: handle.read(1 << 20), b""):
                        h.update(chunk)
    return h.hexdigest()


def timed(argv: list[str]) -> tuple[float, int, list[tuple[float, str]]]:
    """Wall seconds, exit code, and (seconds since start, line) of each stderr line."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = [(time.perf_counter() - start, line.rstrip()) for line in proc.stderr]
    proc.wait()
    return time.perf_counter() - start, proc.returncode, lines


def venv(path: Path, python: str) -> Path:
    subprocess.run([python, "-m", "venv", str(path)], check=True)
    return path


def pip_round(work: Path, python: str) -> float:
    target = venv(work / "pip-env", python)
    seconds, code, lines = timed(
        [
            str(target / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--disable-pip-version-check",
            "-r",
            str(EXAMPLE / "requirements.lock"),
        ]
    )
    if code != 0:
        raise SystemExit("pip failed:\n" + "\n".join(line for _t, line in lines[-20:]))
    shutil.rmtree(target)
    return seconds


def lockguard_round(work: Path, python: str) -> dict:
    target = venv(work / "lg-env", python)
    fresh = tree_hash(target)
    seconds, code, lines = timed(
        [
            sys.executable,
            "-m",
            "lockguard",
            "clean-install",
            "--intent",
            str(EXAMPLE / "lockguard.toml"),
            "--prefix",
            str(target),
            "--yes",
        ]
    )
    if code != 0:
        raise SystemExit("clean-install failed:\n" + "\n".join(line for _t, line in lines[-20:]))
    marks, last = {}, 0.0
    for phase, start in PHASES:
        at = next((t for t, line in lines if re.match(start, line)), last)
        marks[phase], last = at - last, at
    restore, code, _lines = timed(
        [sys.executable, "-m", "lockguard", "restore", "--prefix", str(target)]
    )
    started = time.perf_counter() - restore
    identical = code == 0 and tree_hash(target) == fresh
    # the removed files, deleted in the background
    while list(target.glob(".lockguard/quarantine/*/trash-*")):
        time.sleep(0.2)
    freed = time.perf_counter() - started
    shutil.rmtree(target)
    return {
        "seconds": seconds,
        "phases": marks,
        "restore": restore,
        "identical": identical,
        "freed": freed,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--python",
        default=shutil.which("python3.11") or sys.executable,
        help="the interpreter of the fresh venvs (the example locks Python 3.11)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lockguard-install-bench-"))
    try:
        # warm-up: fills pip's cache (and its wheel cache for the sdist)
        pip_round(work, args.python)
        pips, runs = [], []
        for i in range(args.rounds):
            if i % 2:
                runs.append(lockguard_round(work, args.python))
                pips.append(pip_round(work, args.python))
            else:
                pips.append(pip_round(work, args.python))
                runs.append(lockguard_round(work, args.python))
            print(
                f"round {i + 1}: pip {pips[-1]:.1f} s, clean-install {runs[-1]['seconds']:.1f} s, "
                f"restore {runs[-1]['restore']:.1f} s",
                flush=True,
            )
        pip = statistics.median(pips)
        lg = statistics.median(r["seconds"] for r in runs)
        restore = statistics.median(r["restore"] for r in runs)
        table = [
            "| step | median s | vs pip |",
            "|---|---|---|",
            f"| pip install --require-hashes --no-deps -r requirements.lock | {pip:.1f} | 1.00x |",
            f"| lockguard clean-install --yes | {lg:.1f} | {lg / pip:.2f}x |",
        ]
        for phase, _start in PHASES:
            value = statistics.median(r["phases"][phase] for r in runs)
            table.append(f"| &nbsp;&nbsp;of which {phase} | {value:.1f} | |")
        table.append(
            f"| lockguard restore (of that run): the environment is back | {restore:.1f} | |"
        )
        freed = statistics.median(r["freed"] for r in runs)
        table.append(
            "| &nbsp;&nbsp;until its background deletion of the removed files "
            f"ended | {freed:.1f} | |"
        )
        identical = all(r["identical"] for r in runs)
        version = subprocess.run(
            [args.python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        text = (
            f"## install (bench/install.py, {date.today()})\n\n{machine()}\n\n"
            f"The example lock ({EXAMPLE.name}: 45 packages, torch 2.1.2 cu121) "
            "into a fresh Python "
            f"{version} "
            f"venv, warm pip cache, median of {args.rounds} alternating rounds. "
            "Goals: clean-install <= 1.15x pip "
            f"({'met' if lg <= 1.15 * pip else 'not met'}: {lg / pip:.2f}x), restore under 10 s "
            f"({'met' if restore < 10 else 'not met'}: {restore:.1f} s). "
            "After each restore the venv's tree hash "
            f"(paths, bytes, modes) was {'identical to' if identical else 'DIFFERENT from'} "
            "the fresh venv's.\n\n" + "\n".join(table) + "\n"
        )
        replace_section(Path(__file__).parent / "RESULTS.md", "## install", text)
        print(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
