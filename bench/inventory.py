"""Inventory of a synthetic prefix (200k files, 2k distributions, each with a RECORD; some .so
files) against `find PREFIX -name '*.so*'` on the same tree. Target: under 2x find. Writes
RESULTS.md."""

from __future__ import annotations

import argparse
import base64
import hashlib
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

DIGEST = base64.urlsafe_b64encode(hashlib.sha256(b"").digest()).rstrip(b"=").decode()


def build(root: Path, dists: int, files_per_dist: int) -> Path:
    prefix = root / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = next((prefix / "lib").glob("python3*/site-packages"))
    for d in range(dists):
        name = f"pkg{d:04d}"
        package = site / name
        sub = package / "sub"
        sub.mkdir(parents=True)
        records = []
        for f in range(files_per_dist - 3):
            relative = f"{name}/sub/mod{f}.py" if f % 2 else f"{name}/m{f}.py"
            if f % 25 == 0:
                relative = f"{name}/lib{f}.so.1"
            (site / relative).touch()
            records.append(f"{relative},sha256={DIGEST},0")
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "INSTALLER").write_text("pip\n")
        records += [
            f"{name}-1.0.dist-info/METADATA,,",
            f"{name}-1.0.dist-info/INSTALLER,,",
            f"{name}-1.0.dist-info/RECORD,,",
        ]
        (info / "RECORD").write_text("\n".join(records) + "\n")
    return prefix


def timed(argv: list[str], runs: int) -> float:
    return statistics.median(alternated([argv], runs)[0])


def alternated(commands: list[list[str]], runs: int) -> list[list[float]]:
    """Wall times of each command, run in turn (A B A B ...) so that load hits both alike."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for index, argv in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[index].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dists", type=int, default=1000)
    parser.add_argument("--files", type=int, default=100, help="files per distribution")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lockguard-inventory-"))
    try:
        prefix = build(work, args.dists, args.files)
        count = sum(len(f) for _d, _s, f in os.walk(prefix))
        scan = [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from lockguard.io.env.prefix_scan import scan_prefix; "
            "from lockguard.install.inventory import take_inventory; "
            "take_inventory(scan_prefix(Path(sys.argv[1])), None)",
            str(prefix),
        ]
        timed(["find", str(prefix), "-name", "*.so*"], 1)  # warm the page cache for both
        find, lockguard = alternated([["find", str(prefix), "-name", "*.so*"], scan], args.runs)
        rows = [
            ("find PREFIX -name '*.so*'", find),
            ("lockguard inventory (scan + rules, incl. Python start-up)", lockguard),
        ]
        best_find, median_find = min(find), statistics.median(find)
        table = ["| command | best s | median s | vs find (best / median) |", "|---|---|---|---|"]
        table += [
            f"| {label} | {min(v):.3f} | {statistics.median(v):.3f} | {min(v) / best_find:.2f}x / "
            f"{statistics.median(v) / median_find:.2f}x |"
            for label, v in rows
        ]
        text = (
            f"## inventory (bench/inventory.sh, {date.today()})\n\n{machine()}\n\n"
            f"Synthetic prefix: {count} files, {args.dists} distributions with RECORDs, "
            f"warm page cache, {args.runs} alternated rounds.\n\n" + "\n".join(table) + "\n"
        )
        replace_section(Path(__file__).parent / "RESULTS.md", "## inventory", text)
        print(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
