"""Whether two lockguard source trees take the same inventory of the same prefixes: the findings,
the quarantine list, what is missing and what is outgoing, and the snapshot the scan made, with and
without a lock, on the bad-input corpus's damaged environments and on a damaged synthetic prefix.

    python bench/inventory_same.py BASE_TREE [--keep DIR]

BASE_TREE holds the reference `lockguard/` package (e.g.
`git archive main lockguard | tar -x -C DIR`); this checkout is the other. Each tree scans each
prefix twice with its own cache folder (a second scan may use what the first remembered) and every
answer must equal the base's first."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

# Run in a child with PYTHONPATH set to one tree: scan, inventory without and with a lock, as JSON.
WORKER = r"""
import dataclasses, json, os, sys
from pathlib import Path
from lockguard.errors import InputError
from lockguard.io.env.prefix_scan import scan_prefix
from lockguard.install.inventory import LockView, take_inventory

def plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value

# the prefixes were built just now: let them be memoized, so that the second scan uses the memos
try:
    from lockguard.io.env import scan_memo
    scan_memo.RACY_NS = 0
except ImportError:
    pass
prefix, ld_conf = Path(sys.argv[1]), Path(sys.argv[2])
lock = LockView(pip=json.loads(sys.argv[3]), cuda="12.1", nccl="2.18.1", cudnn="8.9.2")
try:
    # the tree is no part of the prefix
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    snap = scan_prefix(prefix, ld_conf_dir=ld_conf, environ=environ)
except InputError as exc:
    print(json.dumps({"error": [type(exc).__name__, str(exc)]}))
    raise SystemExit(0)
out = {}
for label, view in (("no-lock", None), ("lock", lock)):
    inv = take_inventory(snap, view)
    kept = ("findings", "quarantine", "outgoing", "missing", "conda_missing")
    out[label] = {k: plain(getattr(inv, k)) for k in kept}
shown = plain(snap)
# the scan's by-product for the inventory: compared through its findings
shown.pop("unrecorded", None)
shown["files"] = sorted(shown["files"])  # a list, but read as a set by every rule
shown["files_count"] = len(snap.files)
out["snapshot"] = shown
print(json.dumps(out, sort_keys=True))
"""


def answer(tree: Path, prefix: Path, ld_conf: Path, pins: dict, cache: Path, env: dict) -> dict:
    full = {
        **os.environ,
        **env,
        "PYTHONPATH": str(tree),
        "LOCKGUARD_CACHE_DIR": str(cache),
        "LOCKGUARD_INTERPRETER_TIMEOUT": "5",
    }
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(prefix), str(ld_conf), json.dumps(pins)],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        cwd=tree,
    )
    if done.returncode != 0:
        return {"crash": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout)


# -- the prefixes ----------------------------------------------------------------------------------


def corpus_prefixes(work: Path) -> list[tuple[str, Path]]:
    from tests.support import fuzz_env
    from tests.support.envs import make_venv

    template = make_venv(work / "template")
    fuzz_env.fill_venv(template, {"markupsafe": "2.1.5", "jinja2": "3.1.3", "numpy": "1.26.4"})
    out = []
    for case in fuzz_env.dist_file_cases() + fuzz_env.conda_cases():
        # one per damage; no hangs
        if case.command != "check" or (case.kind == "pth" and case.process):
            continue
        prefix = work / "corpus" / f"{case.kind}-{case.name}"
        prefix.parent.mkdir(parents=True, exist_ok=True)
        if case.shape == "venv":
            shutil.copytree(template, prefix, symlinks=True)
        elif case.shape == "conda":
            prefix.mkdir()
        else:
            continue
        case.damage(prefix)
        out.append((case.id, prefix))
    return out


def synthetic_prefix(work: Path) -> Path:
    """The benchmark's prefix, small, with every kind of damage the inventory reports."""
    from inventory import build

    from tests.support.envs import compile_library

    prefix = build(work / "synthetic", 40, 30)
    site = next((prefix / "lib").glob("python3*/site-packages"))
    (site / "pkg0001/lib0.so.1").unlink()  # a missing shared library
    (site / "pkg0002/lib0.so.1").write_bytes(b"grown")  # resized
    (site / "pkg0003/m4.py").unlink()  # a missing module
    (site / "pkg0004/stray.py").write_text("x = 1\n")  # unowned in an owned folder
    # an unowned library in an owned folder
    (site / "pkg0004/libstray.so.3").write_bytes(b"\x7fELF")
    (site / "orphan/sub").mkdir(parents=True)  # a folder no distribution owns
    (site / "orphan/sub/a.py").write_text("")
    (site / "orphan_mod.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (site / "libtop.so").write_bytes(b"")  # an unowned library at the top
    (site / "escape").symlink_to("/etc")  # a symlink out of the prefix
    (site / "pkg0005/inside_link.py").symlink_to("m0.py")  # a symlink within
    (prefix / "lib/liblisted.so.2").write_bytes(b"")  # lib/ outside site-packages
    with open(site / "pkg0006-1.0.dist-info/RECORD", "a") as record:  # quoted and odd rows
        record.write(
            '"pkg0006/a,b.py",,\n../../../../etc/hostname,,\n/etc/passwd,,\n'
            "pkg0006/./dot.py,,\npkg0006//double.py,,\n../../../bin/python,,\n"
            f"{site}/pkg0006/m0.py,,\npkg0006/lib0.so.1,sha256=x,12\n"
        )
    with open(site / "pkg0007-1.0.dist-info/RECORD", "a") as record:  # odd but unquoted
        record.write("pkg0007\\back.py,,\npkg0007/,,\n.,,\npkg0007/sub/../m0.py,,\n")
    for owner in ("pkg0010", "pkg0011"):  # one SONAME twice (LG216)
        compile_library(site / owner, "libcudart.so.12", "libcudart.so.12")
    for name, version in (
        ("nvidia-cublas-cu11", "11.0"),
        ("nvidia-cublas-cu12", "12.1"),
    ):  # two CUDA majors
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text("")
    (site / "zz.pth").write_text("/tmp\n")
    return prefix


def loader_conf(work: Path) -> Path:
    """An ld.so.conf.d naming a folder with a libcudart of another CUDA and a libnccl (LG217)."""
    from tests.support.envs import compile_library

    libs = work / "syslibs"
    compile_library(libs, "libcudart.so.12.4.99", "libcudart.so.12")
    compile_library(libs, "libnccl.so.2.19.3", "libnccl.so.2")
    compile_library(libs, "libcudnn.so.8", "libcudnn.so.8")
    conf = work / "ld.so.conf.d"
    conf.mkdir()
    (conf / "cuda.conf").write_text(f"{libs}\n# a comment\n/nonexistent\n")
    return conf


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", type=Path)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lockguard-same-", dir=args.keep))
    try:
        conf = loader_conf(work)
        synthetic = synthetic_prefix(work)
        fifo = work / "fifo-record"
        shutil.copytree(synthetic, fifo, symlinks=True)
        record = next(fifo.glob("lib/python3*/site-packages/pkg0008-1.0.dist-info")) / "RECORD"
        record.unlink()
        os.mkfifo(record)  # a FIFO named like a RECORD: bad input, never a hang
        prefixes = [
            ("synthetic", synthetic),
            ("synthetic+conda", build_conda(work)),
            ("synthetic+fifo-record", fifo),
        ] + corpus_prefixes(work)
        pins = {
            "markupsafe": "2.1.5",
            "jinja2": "3.0.0",
            "pkg0001": "1.0",
            "pkg0002": "1.0",
            "pkg0003": "1.0",
            "pkg0004": "2.0",
            "absent": "1.0",
        }
        time.sleep(0.05)  # a new timestamp tick after the last file written
        differ = 0
        started = time.perf_counter()
        for label, prefix in prefixes:
            loader = (
                [{}, {"LD_LIBRARY_PATH": str(work / "syslibs")}]
                if label.startswith("synthetic")
                else [{}]
            )
            for env in loader:
                caches = {tree: Path(tempfile.mkdtemp(dir=work)) for tree in ("base", "this")}
                reference = answer(args.base.resolve(), prefix, conf, pins, caches["base"], env)
                answers = [answer(REPO, prefix, conf, pins, caches["this"], env) for _ in range(2)]
                same = all(a == reference for a in answers)
                differ += not same
                shown = (
                    reference.get("error")
                    or reference.get("crash")
                    or len(reference["lock"]["findings"])
                )
                print(
                    f"{time.perf_counter() - started:6.1f} {'same  ' if same else 'DIFFER'} "
                    f"{label} {'LD' if env else '  '} {str(shown)[:90]}"
                )
                if not same:
                    show_difference(reference, next(a for a in answers if a != reference), "")
        print(f"{len(prefixes)} prefixes, {differ} differ")
        raise SystemExit(1 if differ else 0)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def show_difference(one, other, where: str) -> None:
    if isinstance(one, dict) and isinstance(other, dict):
        for key in sorted(set(one) | set(other)):
            if one.get(key) != other.get(key):
                show_difference(one.get(key), other.get(key), f"{where}.{key}")
    else:
        print(f"    {where}: {json.dumps(one)[:400]}\n      != {json.dumps(other)[:400]}")


def build_conda(work: Path) -> Path:
    """A venv-shaped prefix that also has conda-meta records owning files under lib/."""
    from inventory import build

    prefix = build(work / "conda", 10, 10)
    (prefix / "conda-meta").mkdir()
    (prefix / "lib/libz.so.1").write_bytes(b"")
    (prefix / "lib/libstray.so.1").write_bytes(b"")
    (prefix / "conda-meta/zlib-1.2-0.json").write_text(
        json.dumps(
            {
                "name": "zlib",
                "version": "1.2",
                "build": "0",
                "files": ["lib/libz.so.1", "lib/./gone.so", "bin/x"],
            }
        )
    )
    return prefix


if __name__ == "__main__":
    main()
