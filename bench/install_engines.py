"""clean-install (uv engine) side by side with `uv pip install --require-hashes --no-deps -r
requirements.lock` and `pip install --require-hashes --no-deps -r requirements.lock`, each into a
fresh venv, rounds alternating the order (issue 32). Two cache states:

- warm: every tool keeps its own cache across rounds (lockguard's file cache, uv's, pip's); the
  first round only fills them and is not counted;
- cold: every round starts from empty caches (all of them download everything).

Also timed: uv with the flags clean-install's engine runs (`--link-mode copy`: a file edited in the
prefix must not edit uv's cache), the phases of each clean-install (from its progress lines: the
time until each line first appears), and a no-op clean-install on the environment the last
clean-install left (it already matches the lock). Goal (issue 32): clean-install <= 1.15x uv, warm
and cold; a no-op <= 1 s.

    python bench/install_engines.py --project PATH [--rounds 3] [--build NAME=PYTHON ...] [--no-pip]

PATH holds a lockguard.toml and its requirements.lock (e.g. a requests + numpy lock). The network
is needed. PIP_CONFIG_FILE=/dev/null is set for every tool (no machine-wide pip configuration).
`--build NAME=PYTHON` (repeatable) times `PYTHON -m lockguard` of each build in the same rounds
(two non-editable installs: before and after a change); default: this interpreter's lockguard.
Each build runs with bytecode written to a pycache of its own (PYTHONPYCACHEPREFIX; a
PYTHONDONTWRITEBYTECODE=1 of the caller's is dropped for it): an editable checkout would otherwise
compile every lockguard module from source in every run, which an installed lockguard never does.
Writes its section of RESULTS.md (`--heading`)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import machine  # noqa: E402
from resolve import replace_section  # noqa: E402

# a phase ends with the first progress line that starts with its prefix (the last at exit)
PHASES = (
    ("start-up, lock, scan, plan", "plan for "),
    ("quarantine, locked files from lockguard's cache (or downloaded)", None),
    ("the engine (uv)", "installed "),
    ("record installed files, verify scan (RECORDs)", "import smoke:"),
    ("import smoke (a subprocess)", "verified:"),
    ("finish, exit", None),
)
FILES_READY = " locked file"  # "6 locked files ready (...)"


def uv_binary() -> str:
    import uv

    return str(uv.find_uv_bin())


def timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, int, str, list[tuple[float, str]]]:
    """Wall seconds, exit code, output tail, and (seconds since start, line) of each output line.
    `cwd` is never the repository: `python -m lockguard` there would import its checkout."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None  # the plan is on stdout, progress on stderr: both, in order
    lines = [(time.perf_counter() - start, line.rstrip("\n")) for line in process.stdout]
    code = process.wait()
    seconds = time.perf_counter() - start
    return seconds, code, "\n".join(text for _t, text in lines[-30:]), lines


def phases(lines: list[tuple[float, str]], total: float) -> list[float]:
    """Seconds of each of PHASES, from the progress lines' times."""
    ends = []
    for label, prefix in PHASES:
        if label.startswith("quarantine"):
            hit = next((t for t, text in lines if FILES_READY in text and " ready (" in text), None)
        elif prefix is None:
            hit = total
        elif prefix == "installed ":  # "installed 6 packages with uv"
            found = (t for t, text in lines if text.startswith(prefix) and " with " in text)
            hit = next(found, None)
        else:
            hit = next((t for t, text in lines if text.startswith(prefix)), None)
        ends.append(hit if hit is not None else (ends[-1] if ends else 0.0))
    return [end - (ends[i - 1] if i else 0.0) for i, end in enumerate(ends)]


def one(tool: str, builds: dict, project: Path, work: Path, python: str, caches: Path):
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
    uv = [uv_binary(), "pip", "install", "--no-config", "--require-hashes", "--no-deps",
          "--python", str(target / "bin" / "python"), "-r", lock]  # fmt: skip
    if tool in builds:
        argv = clean_install(builds[tool], project, target)
        env = build_env(env, work, tool)
    elif tool == "uv":
        argv = uv
    elif tool == "uv-copy":  # what clean-install's engine asks of uv
        argv = [*uv, "--link-mode", "copy", "--no-compile-bytecode"]
    else:
        argv = [str(target / "bin" / "python"), "-m", "pip", "install", "--require-hashes",
                "--no-deps", "--disable-pip-version-check", "-r", lock]  # fmt: skip
    seconds, code, tail, lines = timed(argv, env, work)
    if code != 0:
        raise SystemExit(f"{tool} failed (exit {code}):\n{tail}")
    return seconds, (phases(lines, seconds) if tool in builds else None)


def build_env(env: dict, work: Path, build: str) -> dict:
    """A build's own bytecode cache (see the module note)."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(work / f"pycache-{build}")
    return out


def clean_install(python: str, project: Path, target: Path) -> list[str]:
    """lockguard clean-install of the project's lock into `target`, without asking."""
    intent = str(project / "lockguard.toml")
    return [python, "-m", "lockguard", "clean-install", "--intent", intent,
            "--prefix", str(target), "--yes"]  # fmt: skip


def no_op(builds: dict, project: Path, work: Path, caches: Path) -> dict[str, float]:
    out = {}
    for build, python in builds.items():
        env = {**os.environ, "PIP_CONFIG_FILE": "/dev/null", "LOCKGUARD_CACHE_DIR": str(caches)}
        times = []
        for _ in range(3):
            argv = clean_install(python, project, work / f"{build}-env")
            seconds, code, tail, _lines = timed(argv, build_env(env, work, build), work)
            if code != 0:
                raise SystemExit(f"no-op clean-install ({build}) failed:\n{tail}")
            times.append(seconds)
        out[build] = statistics.median(times)
    return out


def rounds(tools, builds, project: Path, work: Path, python: str, count: int, warm: bool):
    times: dict[str, list[float]] = {t: [] for t in tools}
    steps: dict[str, list[list[float]]] = {b: [] for b in builds}
    shared = work / "caches-warm"
    if warm:  # fill every cache once, not counted
        for tool in tools:
            one(tool, builds, project, work, python, shared)
    for i in range(count):
        order = tools[i % len(tools) :] + tools[: i % len(tools)]
        for tool in order:
            caches = shared if warm else work / f"caches-cold-{i}-{tool}"
            seconds, split = one(tool, builds, project, work, python, caches)
            times[tool].append(seconds)
            if split is not None:
                steps[tool].append(split)
            if not warm:
                shutil.rmtree(caches, ignore_errors=True)
        print(
            f"{'warm' if warm else 'cold'} round {i + 1}: "
            + ", ".join(f"{t} {times[t][-1]:.2f} s" for t in tools),
            flush=True,
        )
    medians = {t: statistics.median(v) for t, v in times.items()}
    split = {
        b: [statistics.median(s[k] for s in v) for k in range(len(PHASES))]
        for b, v in steps.items()
    }
    return medians, split


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=shutil.which("python3.11") or sys.executable)
    parser.add_argument("--build", action="append", default=[], metavar="NAME=PYTHON")
    parser.add_argument("--no-pip", action="store_true", help="leave pip out (it is slow)")
    parser.add_argument("--heading", default="## install engines")
    args = parser.parse_args()
    project = args.project.resolve()
    builds = dict(b.split("=", 1) for b in args.build) or {"clean-install": sys.executable}
    tools = [*builds, "uv", "uv-copy"] + ([] if args.no_pip else ["pip"])
    work = Path(tempfile.mkdtemp(prefix="lockguard-engines-bench-"))
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        warm, warm_steps = rounds(tools, builds, project, work, args.python, args.rounds, True)
        idle = no_op(builds, project, work, work / "caches-warm" / "lockguard")
        cold, cold_steps = rounds(tools, builds, project, work, args.python, args.rounds, False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = section(args, project, builds, tools, started, warm, cold, warm_steps, cold_steps, idle)
    replace_section(Path(__file__).parent / "RESULTS.md", args.heading, text)
    print(text)


def section(args, project, builds, tools, started, warm, cold, warm_steps, cold_steps, idle):
    packages = sum(
        1
        for line in (project / "requirements.lock").read_text().splitlines()
        if "==" in line and not line.startswith((" ", "#"))
    )
    labels = {
        "uv": "uv pip install --require-hashes --no-deps -r requirements.lock",
        "uv-copy": "the same, --link-mode copy --no-compile-bytecode (clean-install's engine's)",
        "pip": "pip install --require-hashes --no-deps -r requirements.lock",
    }  # fmt: skip
    for build in builds:
        labels[build] = f"lockguard clean-install --yes (uv engine), {build}"
    table = ["| tool | warm caches, median s | vs uv | cold caches, median s | vs uv |"]
    table.append("|---|---|---|---|---|")
    for tool in tools:
        table.append(
            f"| {labels[tool]} | {warm[tool]:.2f} | {warm[tool] / warm['uv']:.2f}x | "
            f"{cold[tool]:.2f} | {cold[tool] / cold['uv']:.2f}x |"
        )
    for build in builds:
        table.append(f"| no-op clean-install, {build} (the environment matches the lock) | "
                     f"{idle[build]:.2f} | | | |")  # fmt: skip
    steps = ["| phase of clean-install (median s) | " + " | ".join(
        f"{b} warm | {b} cold" for b in builds) + " |"]  # fmt: skip
    steps.append("|---|" + "---|" * (2 * len(builds)))
    for k, (label, _prefix) in enumerate(PHASES):
        steps.append(f"| {label} | " + " | ".join(
            f"{warm_steps[b][k]:.3f} | {cold_steps[b][k]:.3f}" for b in builds) + " |")  # fmt: skip
    met = {b: all(run[b] <= 1.15 * run["uv"] for run in (warm, cold)) for b in builds}
    return (
        f"{args.heading} (bench/install_engines.py, {started})\n\n{machine()}\n\n"
        f"{project.name}'s lock ({packages} packages) into fresh venvs, median of {args.rounds} "
        "alternating rounds per cache state (the no-op: median of 3). Goal: clean-install <= "
        "1.15x uv warm and cold ("
        + ", ".join(f"{b}: {'met' if met[b] else 'not met'}" for b in builds)
        + "), a no-op <= 1 s.\n\n"
        + "\n".join(table)
        + "\n\n"
        + "\n".join(steps)
        + "\n"
    )


if __name__ == "__main__":
    main()
