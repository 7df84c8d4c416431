"""clean-install (uv engine) side by side with `uv pip install --require-hashes --no-deps -r
requirements.lock` and `pip install --require-hashes --no-deps -r requirements.lock`, each into a
fresh venv, rounds alternating the order (issue 32). Two cache states:

- warm: every tool keeps its own cache across rounds (lockguard's file cache, uv's, pip's); the
  first round only fills them and is not counted;
- cold: every round starts from empty caches (all three download everything).

Also timed: a no-op clean-install on the environment the last clean-install left (it already
matches the lock). Goal (issue 32): clean-install <= 1.15x uv, warm and cold; a no-op <= 1 s.

    python bench/install_engines.py --project PATH [--rounds 3]

PATH holds a lockguard.toml and its requirements.lock (e.g. a requests + numpy lock). The network
is needed. PIP_CONFIG_FILE=/dev/null is set for every tool (no machine-wide pip configuration).
Writes its section of RESULTS.md."""

from __future__ import annotations

import argparse
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
from resolve import replace_section  # noqa: E402

TOOLS = ("clean-install", "uv", "pip")


def uv_binary() -> str:
    import uv

    return str(uv.find_uv_bin())


def timed(argv: list[str], env: dict) -> tuple[float, int, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done.returncode, (done.stderr or done.stdout)[-2000:]


def one(tool: str, project: Path, work: Path, python: str, caches: Path) -> float:
    target = work / f"{tool}-env"
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run([python, "-m", "venv", "--without-pip", str(target)], check=True)
    if tool == "pip":  # pip needs itself in the target; not timed
        subprocess.run([python, "-m", "venv", str(target)], check=True)
    env = {
        **os.environ,
        "PIP_CONFIG_FILE": "/dev/null",
        "LOCKGUARD_CACHE_DIR": str(caches / "lockguard"),
        "UV_CACHE_DIR": str(caches / "uv"),
        "PIP_CACHE_DIR": str(caches / "pip"),
    }
    lock = str(project / "requirements.lock")
    argv = {
        "clean-install": clean_install(project, target),
        "uv": [
            uv_binary(),
            "pip",
            "install",
            "--no-config",
            "--require-hashes",
            "--no-deps",
            "--python",
            str(target / "bin" / "python"),
            "-r",
            lock,
        ],
        "pip": [
            str(target / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--disable-pip-version-check",
            "-r",
            lock,
        ],
    }[tool]
    seconds, code, tail = timed(argv, env)
    if code != 0:
        raise SystemExit(f"{tool} failed (exit {code}):\n{tail}")
    return seconds


def clean_install(project: Path, target: Path) -> list[str]:
    """lockguard clean-install of the project's lock into `target`, without asking."""
    intent = str(project / "lockguard.toml")
    return [sys.executable, "-m", "lockguard", "clean-install", "--intent", intent,
            "--prefix", str(target), "--yes"]  # fmt: skip


def no_op(project: Path, work: Path, caches: Path) -> float:
    env = {**os.environ, "PIP_CONFIG_FILE": "/dev/null", "LOCKGUARD_CACHE_DIR": str(caches)}
    argv = clean_install(project, work / "clean-install-env")
    seconds, code, tail = timed(argv, env)
    if code != 0:
        raise SystemExit(f"no-op clean-install failed:\n{tail}")
    return seconds


def rounds(project: Path, work: Path, python: str, count: int, warm: bool) -> dict:
    times: dict[str, list[float]] = {t: [] for t in TOOLS}
    shared = work / "caches-warm"
    if warm:  # fill every cache once, not counted
        for tool in TOOLS:
            one(tool, project, work, python, shared)
    for i in range(count):
        order = TOOLS[i % 3 :] + TOOLS[: i % 3]
        for tool in order:
            caches = shared if warm else work / f"caches-cold-{i}-{tool}"
            times[tool].append(one(tool, project, work, python, caches))
            if not warm:
                shutil.rmtree(caches, ignore_errors=True)
        print(
            f"{'warm' if warm else 'cold'} round {i + 1}: "
            + ", ".join(f"{t} {times[t][-1]:.2f} s" for t in TOOLS),
            flush=True,
        )
    return {t: statistics.median(v) for t, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=shutil.which("python3.11") or sys.executable)
    args = parser.parse_args()
    project = args.project.resolve()
    work = Path(tempfile.mkdtemp(prefix="lockguard-engines-bench-"))
    try:
        warm = rounds(project, work, args.python, args.rounds, warm=True)
        idle = no_op(project, work, work / "caches-warm" / "lockguard")
        cold = rounds(project, work, args.python, args.rounds, warm=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    packages = sum(
        1
        for line in (project / "requirements.lock").read_text().splitlines()
        if "==" in line and not line.startswith((" ", "#"))
    )
    table = ["| tool | warm caches, median s | vs uv | cold caches, median s | vs uv |"]
    table.append("|---|---|---|---|---|")
    labels = {
        "clean-install": "lockguard clean-install --yes (uv engine)",
        "uv": "uv pip install --require-hashes --no-deps -r requirements.lock",
        "pip": "pip install --require-hashes --no-deps -r requirements.lock",
    }
    for tool in TOOLS:
        table.append(
            f"| {labels[tool]} | {warm[tool]:.2f} | {warm[tool] / warm['uv']:.2f}x | "
            f"{cold[tool]:.2f} | {cold[tool] / cold['uv']:.2f}x |"
        )
    table.append(f"| no-op clean-install (the environment matches the lock) | {idle:.2f} | | | |")
    met = all(run["clean-install"] <= 1.15 * run["uv"] for run in (warm, cold))
    text = (
        f"## install engines (bench/install_engines.py, {date.today()})\n\n{machine()}\n\n"
        f"{project.name}'s lock ({packages} packages) into fresh venvs, median of {args.rounds} "
        "alternating rounds per cache state. Goal: clean-install <= 1.15x uv warm and cold "
        f"({'met' if met else 'not met'}), a no-op <= 1 s "
        f"({'met' if idle <= 1 else 'not met'}: {idle:.2f} s).\n\n" + "\n".join(table) + "\n"
    )
    replace_section(Path(__file__).parent / "RESULTS.md", "## install engines", text)
    print(text)


if __name__ == "__main__":
    main()
