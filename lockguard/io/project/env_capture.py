"""Ask a working environment what it holds, for `lockguard init --from-env PREFIX|PYTHON`.

Its interpreter runs a standard-library script (`python -I`): version, marker values, and every
distribution with its Requires-Dist, INSTALLER, direct_url.json and (for torch) the CUDA its build
names in torch/version.py, read as text: torch is never imported. A conda prefix's conda-meta/
records are read as files. The mapping to an intent is pure (lockguard.adopt.environment).
"""

from __future__ import annotations

import json
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.env.prefix_scan import interpreter_of
from lockguard.io.run import run_bounded

CAPTURE_TIMEOUT = 120.0

_SCRIPT = r"""
import json, os, platform, re, sys
from importlib import metadata
out = {"version": "%d.%d.%d" % sys.version_info[:3], "prefix": sys.prefix,
       "executable": sys.executable,
       "markers": {"os_name": os.name, "sys_platform": sys.platform,
                   "platform_machine": platform.machine(),
                   "platform_system": platform.system(), "platform_release": platform.release(),
                   "platform_version": platform.version(),
                   "python_version": "%d.%d" % sys.version_info[:2],
                   "python_full_version": platform.python_version(),
                   "implementation_name": sys.implementation.name,
                   "platform_python_implementation": platform.python_implementation(),
                   "implementation_version": platform.python_version()},
       "dists": []}
seen = set()
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if not name or name.lower() in seen:
        continue
    seen.add(name.lower())
    item = {"name": name, "version": dist.version, "requires": list(dist.requires or []),
            "installer": (dist.read_text("INSTALLER") or "").strip(), "direct_url": None,
            "torch_cuda": "?"}
    direct = dist.read_text("direct_url.json")
    if direct:
        try:
            item["direct_url"] = json.loads(direct)
        except ValueError:
            item["direct_url"] = {"url": "?"}
    if name.lower() == "torch":
        for file in dist.files or []:
            if str(file).replace("\\", "/") == "torch/version.py":
                try:
                    text = file.read_text()
                except OSError:
                    break
                match = re.search(
                    r"^cuda\s*(?::\s*[^=]+)?=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", text, re.M
                )
                item["torch_cuda"] = (match.group(1) or match.group(2)) if match else "?"
                break
    out["dists"].append(item)
print(json.dumps(out))
"""


def capture_environment(target: Path) -> tuple[dict, list[dict]]:
    """(what the interpreter reports, the conda-meta records) of a prefix or an interpreter."""
    python = interpreter_of(target, None) if target.is_dir() else interpreter_of(None, target)
    done = run_bounded(
        [str(python), "-I", "-c", _SCRIPT], timeout=CAPTURE_TIMEOUT, what=str(python)
    )
    if done.returncode is None or done.timed_out or done.flooded:
        raise InputError(done.problem or f"cannot run {python}", file=str(python))
    if done.returncode != 0:
        raise InputError(
            f"{python} could not list its distributions: {done.stderr.strip()[-500:]}",
            file=str(python),
            hint="pass the environment's own python (Python 3.8 or newer)",
        )
    try:
        captured = json.loads(done.stdout)
    except ValueError:
        raise InputError(
            f"{python} printed something that is not the list of its distributions: "
            f"{done.stdout.strip()[:200]!r}",
            file=str(python),
            hint="pass the environment's own python (Python 3.8 or newer)",
        ) from None
    return captured, conda_records(Path(captured["prefix"]))


def conda_records(prefix: Path) -> list[dict]:
    meta = prefix / "conda-meta"
    records = []
    for path in sorted(meta.glob("*.json")) if meta.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("name"):
            records.append(
                {
                    "name": data["name"],
                    "version": str(data.get("version", "")),
                    "build": str(data.get("build", "")),
                    "channel": str(data.get("channel", "")),
                    "depends": [str(d) for d in data.get("depends") or ()],
                    "file": str(path),
                }
            )
    return records
