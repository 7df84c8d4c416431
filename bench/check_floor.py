"""What `lockguard check` costs against the yardsticks of issue 34 §3, on examples/gpu-training.

    python bench/check_floor.py VENV_BIN [ROUNDS]

VENV_BIN: a venv's bin/ with lockguard installed from a wheel (byte-compiled, not editable),
pre-commit-hooks (`check-yaml`) and, for the context columns, uv and pip-tools. Every command runs
once as a warm-up, then all of them in turn, ROUNDS times (paired, alternating: a load that comes
and goes meets every command alike). Wall time (best, median) and CPU time (the child's
user+sys, median) per command; the goals' ratios are of medians, wall and CPU.

The goals:
- `lockguard check --no-cache` <= 1.0x pre-commit-hooks' `check-yaml environment.yml
  conda-lock.yml` (the pre-commit hook runs only after a lock file changed: its uncached path
  is the one users wait for);
- `lockguard check` (cached) <= 1.5x a console script with an empty main (the launcher pip and uv
  write for `[project.scripts]`: what any installed hook costs).
Context, not gates: `python -c pass`, `lockguard check --no-cache --strict` (the full rules),
`uv lock --check --offline` on a small project (torch 2.1 + transformers, locked once here:
it needs PyPI) and `pip-compile --version` (pip-tools has no check mode: its start-up).
Writes nothing outside a temporary folder (and uv's cache, `UV_CACHE_DIR`).
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from check_rounds import once  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "gpu-training"

LAUNCHER = """#!{python}
import re
import sys
from noop import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""

UV_PROJECT = """[project]
name = "uv-check-context"
version = "0"
requires-python = "==3.11.*"
dependencies = ["torch==2.1.*", "transformers==4.36.2"]

[tool.uv]
exclude-newer = "2024-03-01T00:00:00Z"
"""


def uv_project(bin_dir: Path, work: Path) -> Path | None:
    """A small project locked by uv (None: no uv, or PyPI not reachable)."""
    uv = bin_dir / "uv"
    if not uv.exists():
        return None
    project = work / "uv-project"
    project.mkdir()
    (project / "pyproject.toml").write_text(UV_PROJECT)
    done = subprocess.run(
        [str(uv), "lock"], cwd=project, capture_output=True, text=True, check=False, timeout=600
    )
    return project if done.returncode == 0 else None


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps bytecode
    bin_dir = Path(sys.argv[1]).resolve()
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    python = str(bin_dir / "python")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "noop.py").write_text("def main():\n    return 0\n")
        launcher = work / "noop-cli"
        launcher.write_text(LAUNCHER.format(python=python))
        launcher.chmod(0o755)
        subprocess.run([python, "-c", "import noop"], cwd=work, check=True)  # byte-compiled
        cache = work / "cache"
        check = f"env LOCKGUARD_CACHE_DIR={cache} {bin_dir}/lockguard check"
        commands = {
            "python -c pass": f"{python} -c pass",
            "console script, empty main": f"env PYTHONPATH={work} {launcher}",
            "check-yaml environment.yml conda-lock.yml": (
                f"{bin_dir}/check-yaml environment.yml conda-lock.yml"
            ),
            "lockguard check (cached)": check,
            "lockguard check --no-cache": f"{check} --no-cache",
            "lockguard check --no-cache --strict (full rules)": f"{check} --no-cache --strict",
        }
        project = uv_project(bin_dir, work)
        if project is not None:
            commands["uv lock --check --offline (small project)"] = (
                f"{bin_dir}/uv lock --check --offline --directory {project}"
            )
        if (bin_dir / "pip-compile").exists():
            commands["pip-compile --version"] = f"{bin_dir}/pip-compile --version"
        argvs = {label: shlex.split(command) for label, command in commands.items()}
        os.chdir(EXAMPLE)
        for argv in argvs.values():
            once(argv)  # warm-up: the page cache, the result cache, the knowledge parse
        walls: dict[str, list[float]] = {label: [] for label in argvs}
        cpus: dict[str, list[float]] = {label: [] for label in argvs}
        for _ in range(rounds):
            for label, argv in argvs.items():
                wall, cpu = once(argv)
                walls[label].append(wall)
                cpus[label].append(cpu)
    wall = {label: statistics.median(v) for label, v in walls.items()}
    cpu = {label: statistics.median(v) for label, v in cpus.items()}
    base = "python -c pass"
    print(f"{rounds} rounds, load average {os.getloadavg()[0]:.2f} at the end\n")
    print("| command | best ms | median ms | vs python -c pass | CPU median ms |")
    print("|---|---|---|---|---|")
    for label in argvs:
        print(
            f"| {label} | {min(walls[label]) * 1000:.1f} | {wall[label] * 1000:.1f} | "
            f"{wall[label] / wall[base]:.2f}x | {cpu[label] * 1000:.1f} |"
        )
    print("\n| goal | wall | CPU | met |\n|---|---|---|---|")
    for label, yardstick, limit in (
        ("lockguard check --no-cache", "check-yaml environment.yml conda-lock.yml", 1.0),
        ("lockguard check (cached)", "console script, empty main", 1.5),
    ):
        ratio = wall[label] / wall[yardstick]
        print(
            f"| {label} <= {limit}x {yardstick} | {ratio:.2f}x | "
            f"{cpu[label] / cpu[yardstick]:.2f}x | {'yes' if ratio <= limit else 'no'} |"
        )


if __name__ == "__main__":
    main()
