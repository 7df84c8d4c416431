"""Stress test for issue 23, item 6: cold `lockguard resolve` runs, three loops in parallel, and
every exit code that is not the expected one counted, with its stderr tail. Needs live PyPI.

    python bench/stress_resolve.py [--runs 100] [--loops 3] [--lockguard PATH] [--intent FILE]

Each run has a cache folder of its own (LOCKGUARD_CACHE_DIR), so every run is cold and its
speculative fetches are still on their way when the resolution is done: the moment the
intermittent exit 70 (`SyntaxError: unterminated triple-quoted string literal` importing
lockfiles/headers.py during render) came from. Cause: the HTTP client's connection pool was closed
while fetch threads still read from their TLS sockets; the kernel gave the freed descriptor numbers
to the source files render imports, and OpenSSL, still reading "its" socket, took the first bytes
of a module's source (io/index/http.py now closes the pool only once no request is in flight).
The machine's PYTHONDONTWRITEBYTECODE=1 makes every import read its source. The three loops and the
2-CPU machine load it; nothing here is timed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

INTENT = """\
python = "3.11"
cuda = "12.8"
channels = []
pip = ["torch==2.9.*", "transformers", "accelerate", "peft", "datasets", "trl", "bitsandbytes"]
"""


def one_run(lockguard: str, intent_text: str, work: Path, index: int) -> tuple[int, str, float]:
    folder = work / f"run-{index}"
    folder.mkdir(parents=True)
    (folder / "lockguard.toml").write_text(intent_text)
    env = {
        **os.environ,
        "LOCKGUARD_CACHE_DIR": str(folder / "cache"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    start = time.perf_counter()
    proc = subprocess.run(
        [lockguard, "resolve", "--intent", str(folder / "lockguard.toml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    seconds = time.perf_counter() - start
    shutil.rmtree(folder, ignore_errors=True)
    return proc.returncode, proc.stderr[-600:], seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100, help="runs in all, spread over the loops")
    parser.add_argument("--loops", type=int, default=3, help="loops running side by side")
    parser.add_argument("--lockguard", default=str(Path(sys.executable).parent / "lockguard"))
    parser.add_argument(
        "--intent", default=None, help="a lockguard.toml to resolve (default: a torch + HF stack)"
    )
    parser.add_argument("--expect", type=int, default=0, help="the exit code every run should have")
    args = parser.parse_args()
    intent_text = Path(args.intent).read_text() if args.intent else INTENT
    work = Path(tempfile.mkdtemp(prefix="lockguard-stress-"))
    counter = iter(range(args.runs))
    guard = threading.Lock()
    codes: Counter[int] = Counter()
    failures: list[tuple[int, int, str]] = []
    seconds: list[float] = []

    def loop() -> None:
        while True:
            with guard:
                index = next(counter, None)
            if index is None:
                return
            code, tail, took = one_run(args.lockguard, intent_text, work, index)
            with guard:
                codes[code] += 1
                seconds.append(took)
                if code != args.expect:
                    failures.append((index, code, tail))
                print(f"run {index + 1}/{args.runs}: exit {code} in {took:.1f} s", flush=True)

    threads = [threading.Thread(target=loop) for _ in range(args.loops)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n{sum(codes.values())} runs, {args.loops} loops in parallel: "
        f"exit codes {dict(sorted(codes.items()))}; {len(failures)} not exit {args.expect}; "
        f"median {sorted(seconds)[len(seconds) // 2]:.1f} s a run"
    )
    for index, code, tail in failures:
        print(f"--- run {index + 1}: exit {code}\n{tail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
