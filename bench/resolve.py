"""Benchmark `lockguard resolve` against `pip-compile` and `uv pip compile` on the same intents,
cold and warm cache, in one session. Needs network (live PyPI). Writes bench/RESULTS.md's
resolve section.

    python bench/resolve.py            # both intents
    python bench/resolve.py --small    # the small intent only
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
DEEPSPEED_METADATA = ["hjson", "ninja", "numpy", "packaging>=20.0", "psutil", "py-cpuinfo", "pydantic",
                      "pynvml", "torch", "tqdm"]
INTENTS = {
    "small": ["torch==2.1.0", "transformers==4.36.2", "deepspeed==0.13.1"],
    "big": ["torch==2.1.0", "transformers==4.36.2", "deepspeed==0.13.1", "torchvision==0.16.0",
            "xformers==0.0.22.post7", "accelerate==0.27.2", "datasets==2.17.1"],
}


def write_inputs(folder: Path, requirements: list[str]) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "requirements.in").write_text("\n".join(requirements) + "\n")
    (folder / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "12.1"\nchannels = []\n'
        f"pip = {json.dumps(requirements)}\nexclude-newer = \"{EXCLUDE_NEWER}\"\n"
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        f"requires-dist = {json.dumps(DEEPSPEED_METADATA)}\n")
    # uv gets the same static metadata for deepspeed (its `dependency-metadata` setting)
    (folder / "uv.toml").write_text(
        '[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
        f"requires-dist = {json.dumps(DEEPSPEED_METADATA)}\n")


def bench_intent(name: str, requirements: list[str], tools: Path) -> list[tuple[str, Run, Run]]:
    work = Path(tempfile.mkdtemp(prefix=f"lockguard-bench-{name}-"))
    write_inputs(work, requirements)
    results = []
    commands = {
        "lockguard resolve": ([str(tools / "lockguard"), "resolve"], lambda c: {"LOCKGUARD_CACHE_DIR": str(c)}),
        "uv pip compile --generate-hashes": (
            [str(tools / "uv"), "pip", "compile", "requirements.in", "-o", "uv.txt", "--generate-hashes",
             "--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28",
             "--exclude-newer", EXCLUDE_NEWER, "--quiet"],
            lambda c: {"UV_CACHE_DIR": str(c)}),
        "pip-compile": (
            [str(tools / "pip-compile"), "requirements.in", "-o", "pip-tools.txt", "--quiet", "--cache-dir", "CACHE"],
            lambda c: {}),
    }
    for label, (argv, env_for) in commands.items():
        cache = work / f"cache-{label.split()[0]}"
        if cache.exists():
            shutil.rmtree(cache)
        argv = [str(cache) if a == "CACHE" else a for a in argv]
        cold = run(f"{label} (cold)", argv, cwd=work, env=env_for(cache))
        warm = run(f"{label} (warm)", argv, cwd=work, env=env_for(cache))
        results.append((label, cold, warm))
        print(f"  {label}: cold {cold.seconds:.2f}s {cold.fetched_mb:.1f} MB (exit {cold.code}); "
              f"warm {warm.seconds:.2f}s", flush=True)
        if cold.code:
            print("    " + cold.tail.replace("\n", "\n    "))
    shutil.rmtree(work, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--tools", default=None, help="a venv bin/ with lockguard, uv and pip-compile")
    args = parser.parse_args()
    tools = Path(args.tools) if args.tools else Path(sys.executable).parent
    sections = []
    for name, requirements in INTENTS.items():
        if args.small and name != "small":
            continue
        print(f"intent {name}: {', '.join(requirements)}", flush=True)
        rows = bench_intent(name, requirements, tools)
        lockguard = rows[0]
        table = ["| tool | cold s | warm s | fetched MB (cold) | peak MB | exit | cold vs lockguard |",
                 "|---|---|---|---|---|---|---|"]
        for label, cold, warm in rows:
            ratio = cold.seconds / lockguard[1].seconds if lockguard[1].seconds else 0
            table.append(f"| {label} | {cold.seconds:.2f} | {warm.seconds:.2f} | {cold.fetched_mb:.1f} | "
                         f"{max(cold.peak_mb, warm.peak_mb):.0f} | {cold.code} | {ratio:.2f}x |")
        sections.append(f"### {name}: `{' '.join(requirements)}`\n\n" + "\n".join(table))
    text = (f"## resolve (bench/resolve.py, {date.today()})\n\n{machine()}\n\nSame intent for all three tools "
            f"(Python 3.11, linux x86_64). lockguard and uv use exclude-newer {EXCLUDE_NEWER} and hashes; "
            "pip-compile has no exclude-newer and runs without --generate-hashes (with it, it downloads every "
            "wheel of every platform). Network bytes are measured machine-wide from /proc/net/dev.\n\n"
            + "\n\n".join(sections) + "\n")
    replace_section(HERE / "RESULTS.md", "## resolve", text)
    print(text)


def replace_section(path: Path, heading: str, text: str) -> None:
    current = path.read_text() if path.exists() else "# Benchmark results\n\n"
    parts = current.split("\n## ")
    kept = [parts[0].rstrip() + "\n"] + ["## " + p.rstrip() + "\n" for p in parts[1:] if not ("## " + p).startswith(heading)]
    path.write_text("\n".join(kept + [text]))


if __name__ == "__main__":
    main()
