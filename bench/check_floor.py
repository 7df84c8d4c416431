"""What `lockguard check` costs against what it cannot avoid (issue 24's check goals).

Run in a project folder with a venv that has lockguard installed from a wheel (byte-compiled):

    python bench/check_floor.py VENV_BIN [ROUNDS]

Two yardsticks and two floors, in alternated rounds (bench/check_rounds.py) beside the check:
- `python -c pass`: bare Python start-up;
- a console script that does nothing: the launcher pip and uv write for `[project.scripts]`
  (it imports `re` before the package's main);
- the libraries floor: one module that imports every module outside lockguard that a
  `lockguard check --no-cache` loads (click, PyYAML, packaging, tomllib, hashlib, ...);
- that floor plus as many frozen, slotted dataclasses as the check creates (the one kind of value
  the issue asks for), each with four fields.
The gap between the last floor and the uncached check is lockguard's own code: its modules'
bytecode, its patterns and its work. Prints the counts, then the table; writes nothing outside a
temporary folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Runs one check in-process, then lists what it loaded: the modules outside lockguard, and the
# dataclasses lockguard's modules define.
PROBE = """
import json, sys
report, sys.argv = sys.argv[1], ["lockguard", *sys.argv[2:]]
from lockguard.start import main
try:
    main()
except SystemExit:
    pass
outside = sorted(n for n, m in list(sys.modules.items())
                 if not n.startswith(("lockguard", "__main__")) and getattr(m, "__spec__", None))
own = [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("lockguard")]
classes = {id(v) for m in own for v in vars(m).values()
           if isinstance(v, type) and "__dataclass_fields__" in vars(v)}
with open(report, "w") as out:
    json.dump({"outside": outside, "dataclasses": len(classes)}, out)
"""

LAUNCHER = """#!{python}
import re
import sys
from noop import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def loaded_by_check(python: str, work: Path) -> dict:
    report = work / "loaded.json"
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(work / "probe-cache")}
    subprocess.run(
        [python, "-c", PROBE, str(report), "check", "--no-cache"],
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(report.read_text())


def floor_module(outside: list[str], dataclasses: int) -> str:
    importable = [n for n in outside if not n.startswith("_") and "._" not in n]
    lines = ["from dataclasses import dataclass", ""]
    lines += [f"import {name}" for name in importable]
    for i in range(dataclasses):
        lines += [
            "",
            "@dataclass(frozen=True, slots=True)",
            f"class Value{i}:",
            "    a: int",
            "    b: str",
            "    c: tuple = ()",
            "    d: object = None",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps bytecode
    bin_dir = Path(sys.argv[1]).resolve()
    rounds = sys.argv[2] if len(sys.argv) > 2 else "30"
    python = str(bin_dir / "python")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        loaded = loaded_by_check(python, work)
        (work / "libraries.py").write_text(floor_module(loaded["outside"], 0))
        (work / "libraries_values.py").write_text(
            floor_module(loaded["outside"], loaded["dataclasses"])
        )
        (work / "noop.py").write_text("def main():\n    return 0\n")
        launcher = work / "noop-cli"
        launcher.write_text(LAUNCHER.format(python=python))
        launcher.chmod(0o755)
        for module in ("libraries", "libraries_values", "noop"):  # byte-compiled, as installed
            subprocess.run([python, "-c", f"import {module}"], cwd=work, check=True)
        print(
            f"a check --no-cache loads {len(loaded['outside'])} modules outside lockguard "
            f"and defines {loaded['dataclasses']} dataclasses"
        )
        cache = work / "cache"
        path = f"env PYTHONPATH={work}"
        check = f"env LOCKGUARD_CACHE_DIR={cache} {bin_dir}/lockguard check"
        subprocess.run(check.split(), stdout=subprocess.DEVNULL, check=False)  # the cached entry
        subprocess.run(
            [
                python,
                str(HERE / "check_rounds.py"),
                rounds,
                f"python -c pass={python} -c pass",
                f"console script, empty main={path} {launcher}",
                f"libraries the check imports={path} {python} -c 'import libraries'",
                f"those + {loaded['dataclasses']} dataclasses="
                f"{path} {python} -c 'import libraries_values'",
                f"lockguard check (cached)={check}",
                f"lockguard check --no-cache={check} --no-cache",
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
