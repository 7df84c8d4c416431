"""The pure half of clean-install: which files of outgoing distributions move, which modules the
smoke imports, the kept-tool and loader-path rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.install.inventory import LockView, take_inventory
from lockguard.install.plan import make_plan
from lockguard.install.verify import direct_names, smoke_modules
from lockguard.model.prefix import InstalledDist, LibraryDir, PrefixSnapshot

SITE = "lib/python3.11/site-packages"


def dist(name: str, version: str, paths: list[str], **extra) -> InstalledDist:
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    return InstalledDist(
        name,
        version,
        f"/env/{SITE}",
        f"/env/{SITE}/{info}",
        paths=tuple(f"{SITE}/{p}" for p in [*paths, f"{info}/RECORD"]),
        **extra,
    )


def snapshot(*dists: InstalledDist, files: list[str] | None = None) -> PrefixSnapshot:
    snap = PrefixSnapshot(
        prefix="/env",
        python="/env/bin/python",
        python_version="3.11.7",
        sys_path=[f"/env/{SITE}"],
        site_dirs=[f"/env/{SITE}"],
    )
    snap.dists = list(dists)
    snap.files = files if files is not None else sorted({p for d in dists for p in d.paths})
    return snap


def test_outgoing_files_skip_what_a_staying_distribution_lists_and_what_makes_the_environment():
    old = dist(
        "nvidia-foo-cu11",
        "1.0",
        [
            "nvidia/__init__.py",
            "nvidia/foo/lib/libfoo.so.8",
            "../../../pyvenv.cfg",
            "../../../bin/python3",
        ],
    )
    old = InstalledDist(
        old.name,
        old.version,
        old.site,
        old.dist_info,
        paths=tuple(p.replace(f"{SITE}/../../../", "") for p in old.paths),
    )
    kept = dist("nvidia-bar-cu12", "1.0", ["nvidia/__init__.py", "nvidia/bar/__init__.py"])
    snap = snapshot(
        old,
        kept,
        files=[*old.paths, *kept.paths, f"{SITE}/nvidia_foo_cu11-1.0.dist-info/INSTALLER"],
    )
    lock = LockView(pip={"nvidia-bar-cu12": "1.0", "nvidia-foo-cu12": "2.0"})
    plan = make_plan(take_inventory(snap, lock), snap, requirements="requirements.lock")
    assert [(o.name, o.reason) for o in plan.outgoing] == [
        ("nvidia-foo-cu11", "CUDA family switch: the lock has nvidia-foo-cu12 2.0")
    ]
    moving = {m.path for m in plan.moves()}
    assert f"{SITE}/nvidia/foo/lib/libfoo.so.8" in moving
    # the whole .dist-info, RECORD or not
    assert f"{SITE}/nvidia_foo_cu11-1.0.dist-info/INSTALLER" in moving
    assert f"{SITE}/nvidia/__init__.py" not in moving  # nvidia-bar-cu12 stays and lists it too
    assert "pyvenv.cfg" not in moving and "bin/python3" not in moving  # whatever a RECORD claims
    assert plan.install == ["nvidia-foo-cu12==2.0"]


def test_the_smoke_imports_torch_and_the_direct_requirements_top_level_modules():
    torch = dist("torch", "2.1.2", ["torch/__init__.py", "functorch/__init__.py"])
    yaml = dist("pyyaml", "6.0.1", ["yaml/__init__.py", "_yaml/__init__.py"])
    ext = dist("fastmod", "1.0", ["fastmod.cpython-311-x86_64-linux-gnu.so"])
    meta = dist("nothing-importable", "1.0", [])
    snap = snapshot(torch, yaml, ext, meta)
    locked = {"torch": "2.1.2", "pyyaml": "6.0.1", "fastmod": "1.0", "nothing-importable": "1.0"}
    direct = direct_names(
        ["PyYAML>=6", "fastmod ; python_version > '3'", "nothing_importable", "torch==2.1.*"]
    )
    assert smoke_modules(snap, locked, direct) == ["torch", "yaml", "fastmod"]


def test_kept_tools_conflicting_with_a_pin_and_their_markers():
    wheel = dist(
        "wheel",
        "0.48.0",
        [],
        requires=(
            "packaging>=24.0",
            "pytest; extra == 'test'",
            "packaging<20; python_version < '3.0'",
            "not a requirement (((",
        ),
    )
    findings = [
        f
        for f in take_inventory(snapshot(wheel), LockView(pip={"packaging": "23.2"})).findings
        if f.code == "LG221"
    ]
    assert len(findings) == 1 and "requires packaging>=24.0" in findings[0].message
    assert not [
        f
        for f in take_inventory(snapshot(wheel), LockView(pip={"packaging": "24.1"})).findings
        if f.code == "LG221"
    ]


def test_kept_tools_without_requirements_never_import_packagings_requirement_parser():
    """Most environments keep pip alone (no Requires-Dist): the inventory against a lock then
    reads no requirement, and packaging.requirements (a tenth of a 100k-file scan) stays
    unimported."""
    script = (
        "import sys\n"
        "from tests.test_install_plan import dist, snapshot\n"
        "from lockguard.install.inventory import LockView, take_inventory\n"
        "take_inventory(snapshot(dist('pip', '24.0', ['pip/__init__.py'])), "
        "LockView(pip={'numpy': '1.26.4'}))\n"
        "print('packaging.requirements' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_loader_path_libraries_count_only_under_the_locked_soname():
    snap = snapshot()
    snap.library_dirs = [
        LibraryDir(
            "/usr/local/cuda/lib64",
            "LD_LIBRARY_PATH",
            (
                ("libcudart.so.13", "libcudart.so.13"),
                ("libcudart.so.13.0.48", "libcudart.so.13"),
                ("libcudart.so.12", "libcudart.so.12"),
                ("libcudart.so.12.4.127", "libcudart.so.12"),
                ("libcudnn.so.9.1.0", None),
                ("libnccl.so.2.19.3", "libnccl.so.2"),
            ),
        )
    ]
    lock = LockView(pip={}, cuda="12.1", nccl="2.18.1", cudnn="8.9.2.26")
    found = [f.message for f in take_inventory(snap, lock).findings if f.code == "LG217"]
    assert len(found) == 2
    assert any("libcudart.so.12.4.127" in m for m in found) and any(
        "libnccl.so.2.19.3" in m for m in found
    )


@pytest.mark.parametrize(
    "path, start",
    [
        ("/env/lib/x.pth", "/env"),
        ("/env", "/env"),
        ("/home/u/.local/x.pth", "/env"),
        ("/env/lib/python3.11/site-packages/a-1.dist-info", "/env"),
        ("/", "/env"),
    ],
)
def test_relative_path_is_relpath_without_the_file_system(path, start):
    """The planning code is pure: relative_path answers what os.path.relpath answers for the
    absolute, normalized paths a PrefixSnapshot holds."""
    import os

    from lockguard.model.prefix import relative_path

    assert relative_path(path, start) == os.path.relpath(path, start)


def test_a_small_group_of_stale_files_is_named_file_by_file_without_verbose():
    from lockguard.install.inventory import QuarantineItem
    from lockguard.install.plan import Plan

    few = [f"{SITE}/torch/lib/libold{i}.so" for i in range(3)]
    many = [f"{SITE}/nvidia/cudnn/lib/libcudnn_{i}.so.8" for i in range(4)]
    plan = Plan(
        prefix="/env",
        python="/env/bin/python",
        requirements="requirements.lock",
        quarantine=[QuarantineItem(p, "left behind by torch 1.13.1") for p in few + many],
        sites=[f"{SITE}/"],
    )
    text = plan.text()
    assert f"    {SITE}/torch/lib/  3 files" in text
    assert all(f"      {p.rsplit('/', 1)[1]}  (" in text for p in few)  # named without -v
    assert f"    {SITE}/nvidia/cudnn/  4 files" in text
    assert "libcudnn_0.so.8" not in text  # a bigger group stays one line; -v lists it
    assert "libcudnn_0.so.8" in plan.text(verbose=True)
