"""Benchmark `lockguard resolve` against `pip-compile` and `uv pip compile` on the same intents,
cold and warm cache, in one session. Needs network (live PyPI). Writes bench/RESULTS.md's
resolve section.

    python bench/resolve.py            # both intents
    python bench/resolve.py --small    # the small intent only
    python bench/resolve.py --realworld [--uv PATH]   # an unsatisfiable intent and a torch-unpinned
                                                      # one (vllm), lockguard against uv only
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import Run, machine, run  # noqa: E402

HERE = Path(__file__).resolve().parent
EXCLUDE_NEWER = "2024-03-01T00:00:00Z"
DEEPSPEED_METADATA = [
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
INTENTS = {
    "small": ["torch==2.1.0", "transformers==4.36.2", "deepspeed==0.13.1"],
    "big": [
        "torch==2.1.0",
        "transformers==4.36.2",
        "deepspeed==0.13.1",
        "torchvision==0.16.0",
        "xformers==0.0.22.post7",
        "accelerate==0.27.2",
        "datasets==2.17.1",
    ],
}


# issue 12: an unsatisfiable intent (torchvision 0.16 pins torch 2.1.x) and a torch-unpinned one
REALWORLD = {
    "unsatisfiable": ["torch==2.2.*", "torchvision==0.16.*"],
    "vllm, torch unpinned": ["vllm==0.6.3.post1"],
}
REALWORLD_CUTOFF = (
    "2025-10-01T00:00:00Z"  # vllm 0.6.3's outlines needs pyairports: first upload 2025-09-25
)


def write_inputs(folder: Path, requirements: list[str], exclude_newer: str = EXCLUDE_NEWER) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.in").write_text("\n".join(requirements) + "\n")
    (folder / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "12.1"\nchannels = []\n'
        f'pip = {json.dumps(requirements)}\nexclude-newer = "{exclude_newer}"\n'
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        f"requires-dist = {json.dumps(DEEPSPEED_METADATA)}\n"
    )
    # uv gets the same static metadata for deepspeed (its `dependency-metadata` setting)
    (folder / "uv.toml").write_text(
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        f"requires-dist = {json.dumps(DEEPSPEED_METADATA)}\n"
    )


def bench_intent(name: str, requirements: list[str], tools: Path) -> list[tuple[str, Run, Run]]:
    work = Path(tempfile.mkdtemp(prefix=f"lockguard-bench-{name}-"))
    write_inputs(work, requirements)
    results = []
    commands = {
        "lockguard resolve": (
            [str(tools / "lockguard"), "resolve"],
            lambda c: {"LOCKGUARD_CACHE_DIR": str(c)},
        ),
        "uv pip compile --generate-hashes": (
            [
                str(tools / "uv"),
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
                "--exclude-newer",
                EXCLUDE_NEWER,
                "--quiet",
            ],
            lambda c: {"UV_CACHE_DIR": str(c)},
        ),
        "pip-compile": (
            [
                str(tools / "pip-compile"),
                "requirements.in",
                "-o",
                "pip-tools.txt",
                "--quiet",
                "--cache-dir",
                "CACHE",
            ],
            lambda c: {},
        ),
    }
    for label, (argv, env_for) in commands.items():
        cache = work / f"cache-{label.split()[0]}"
        if cache.exists():
            shutil.rmtree(cache)
        argv = [str(cache) if a == "CACHE" else a for a in argv]
        cold = run(f"{label} (cold)", argv, cwd=work, env=env_for(cache))
        warm = run(f"{label} (warm)", argv, cwd=work, env=env_for(cache))
        results.append((label, cold, warm))
        print(
            f"  {label}: cold {cold.seconds:.2f}s {cold.fetched_mb:.1f} MB (exit {cold.code}); "
            f"warm {warm.seconds:.2f}s",
            flush=True,
        )
        if cold.code:
            print("    " + cold.tail.replace("\n", "\n    "))
    shutil.rmtree(work, ignore_errors=True)
    return results


def bench_realworld(tools: Path, uv: Path) -> str:
    """lockguard and uv, cold cache, on REALWORLD: exit codes, seconds, the first error line, and
    whether both tools pinned the same versions."""
    import subprocess

    table = [
        "| intent | tool | exit | cold s | warm s | cold vs uv | says | same pins as uv |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, requirements in REALWORLD.items():
        work = Path(tempfile.mkdtemp(prefix="lockguard-bench-rw-"))
        write_inputs(work, requirements, REALWORLD_CUTOFF)
        commands = {
            "lockguard resolve": (
                [str(tools / "lockguard"), "-v", "resolve"],
                {"LOCKGUARD_CACHE_DIR": str(work / "cache-lg")},
            ),
            "uv pip compile": (
                [
                    str(uv),
                    "pip",
                    "compile",
                    "requirements.in",
                    "-o",
                    "uv.txt",
                    "--python-version",
                    "3.11",
                    "--python-platform",
                    "x86_64-manylinux_2_28",
                    "--exclude-newer",
                    REALWORLD_CUTOFF,
                    "--no-header",
                ],
                {"UV_CACHE_DIR": str(work / "cache-uv")},
            ),
        }
        results = {}
        for label, (argv, env) in commands.items():
            cold = run(label, argv, cwd=work, env=env)
            warm = subprocess.run(
                argv,
                cwd=work,
                env={**__import__("os").environ, **env},
                capture_output=True,
                text=True,
                timeout=1800,
            )
            results[label] = (cold, warm)
        lg, uvr = results["lockguard resolve"][0], results["uv pip compile"][0]
        same = ""
        if lg.code == 0 and uvr.code == 0:
            ours = _pins((work / "requirements.lock").read_text())
            theirs = _pins((work / "uv.txt").read_text())
            differ = sorted(n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n))
            same = (
                "yes"
                if not differ
                else "no: " + ", ".join(f"{n} {ours.get(n)} vs {theirs.get(n)}" for n in differ)
            )
        for label, (cold, warm) in results.items():
            said = _first_error(warm.stderr)
            own = next(
                (line for line in warm.stderr.splitlines() if line.startswith("fetched ")), ""
            )
            took = time_of(label, commands[label], work)
            ratio = cold.seconds / uvr.seconds if uvr.seconds else 0
            table.append(
                f"| {name} | {label} | {cold.code} | {cold.seconds:.2f} | {took:.2f} | "
                f"{ratio:.2f}x | {said} | {same if label.startswith('lockguard') else ''} |"
            )
            print(
                f"  {name}: {label} exit {cold.code} in {cold.seconds:.2f}s "
                f"(warm {took:.2f}s); {said} {own}",
                flush=True,
            )
        shutil.rmtree(work, ignore_errors=True)
    return (
        f"## resolve, real-world intents (bench/resolve.py --realworld, {date.today()})\n\n"
        f"{machine()}\n\n"
        "Python 3.11, linux x86_64, cuda 12.1 for lockguard, "
        f"exclude-newer {REALWORLD_CUTOFF} for both, cold and warm caches (network bytes are not "
        "compared: the machine is shared, /proc/net/dev counts every process); uv knows nothing "
        "of CUDA (it answers for PyPI's wheels). `unsatisfiable`: "
        f"`{' '.join(REALWORLD['unsatisfiable'])}`; "
        f"`vllm`: `{' '.join(REALWORLD['vllm, torch unpinned'])}` "
        "(torch comes from vllm's pin, PyPI's build is the cu121 variant: no PyTorch index "
        "needed). Most of lockguard's cold vllm time is building pyairports' sdist for its "
        "metadata in an isolated pip environment (about 12 s; `lockguard -v resolve` shows "
        "it).\n\n" + "\n".join(table) + "\n"
    )


def time_of(label: str, command: tuple[list[str], dict], work: Path) -> float:
    argv, env = command
    return run(label, argv, cwd=work, env=env).seconds


def _pins(text: str) -> dict[str, str]:
    import re

    return {
        m.group(1).lower().replace("_", "-"): m.group(2)
        for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", text, re.M)
    }


def _first_error(tail: str) -> str:
    for line in tail.splitlines():
        line = line.strip()
        if line.startswith(("lockguard: error:", "error:", "×", "╰─▶", "Because")):
            return line[:160].replace("|", "/")
    return ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument(
        "--realworld", action="store_true", help="the issue 12 intents, against uv only"
    )
    parser.add_argument("--uv", default=None, help="the uv executable (default: next to the tools)")
    parser.add_argument(
        "--tools", default=None, help="a venv bin/ with lockguard, uv and pip-compile"
    )
    args = parser.parse_args()
    tools = Path(args.tools) if args.tools else Path(sys.executable).parent
    if args.realworld:
        text = bench_realworld(tools, Path(args.uv) if args.uv else tools / "uv")
        replace_section(HERE / "RESULTS.md", "## resolve, real-world intents", text)
        print(text)
        return
    sections = []
    for name, requirements in INTENTS.items():
        if args.small and name != "small":
            continue
        print(f"intent {name}: {', '.join(requirements)}", flush=True)
        rows = bench_intent(name, requirements, tools)
        lockguard = rows[0]
        table = [
            "| tool | cold s | warm s | fetched MB (cold) | peak MB | exit | cold vs lockguard |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, cold, warm in rows:
            ratio = cold.seconds / lockguard[1].seconds if lockguard[1].seconds else 0
            table.append(
                f"| {label} | {cold.seconds:.2f} | {warm.seconds:.2f} | {cold.fetched_mb:.1f} | "
                f"{max(cold.peak_mb, warm.peak_mb):.0f} | {cold.code} | {ratio:.2f}x |"
            )
        sections.append(f"### {name}: `{' '.join(requirements)}`\n\n" + "\n".join(table))
    text = (
        f"## resolve (bench/resolve.py, {date.today()})\n\n{machine()}\n\n"
        "Same intent for all three tools (Python 3.11, linux x86_64). "
        f"lockguard and uv use exclude-newer {EXCLUDE_NEWER} and hashes; "
        "pip-compile has no exclude-newer and runs without --generate-hashes (with it, it "
        "downloads every "
        "wheel of every platform). Network bytes are measured machine-wide from /proc/net/dev.\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    replace_section(HERE / "RESULTS.md", "## resolve", text)
    print(text)


def replace_section(path: Path, heading: str, text: str) -> None:
    current = path.read_text() if path.exists() else "# Benchmark results\n\n"
    parts = current.split("\n## ")
    kept = [parts[0].rstrip() + "\n"] + [
        "## " + p.rstrip() + "\n" for p in parts[1:] if not ("## " + p).startswith(heading + " (")
    ]
    path.write_text("\n".join(kept + [text]))


if __name__ == "__main__":
    main()
