"""`restore --list` (issue 32): a quarantine's size is the disk deleting it gives back (a file once
however many hard links it has, nothing for one linked from outside: a run killed during the
engine keeps a hard link of the whole prefix in shadow/), an interrupted run gets no `--prune`
hint (prune never deletes it), and undone runs list nothing as quarantined, removed or
installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lockguard.io.env.quarantine_runs import folder_size
from tests.support.envs import PIP_ENV, pip_install
from tests.support.faults import fault_env


def test_a_file_counts_once_and_not_while_linked_from_outside(tmp_path):
    folder = tmp_path / "q"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "one").write_bytes(b"x" * 1000)
    os.link(folder / "a" / "one", folder / "two")  # two links, both inside: 1000 bytes
    outside = tmp_path / "env-file"
    outside.write_bytes(b"y" * 5000)
    os.link(outside, folder / "shadow")  # the environment's own bytes: no growth
    (folder / "link").symlink_to(outside)
    assert folder_size(folder) == 1000 + len(str(outside))  # the symlink itself, not followed


def lockguard(project: Path, venv: Path, *args: str, faults=()):
    command, rest = args[0], args[1:]
    intent = [] if command == "restore" else ["--intent", str(project / "lockguard.toml")]
    base = {**os.environ, **PIP_ENV}
    return subprocess.run(
        [sys.executable, "-m", "lockguard", command, *intent, "--prefix", str(venv), *rest],
        env=fault_env(*faults, base=base) if faults else base,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_run_killed_during_the_engine_lists_its_real_size_and_no_prune_hint(
    world, tmp_path, venv
):
    project = world.locked(tmp_path / "project", cuda="12.1", pip=["jinja2", "oldlib"])
    pip_install(venv, world.pypi.url, "oldlib==1.0")
    killed = {
        "target": "lockguard.io.env.engines.registry:run_engine",
        "action": "exit",
        "when": "after",
        "code": 137,
    }
    assert lockguard(project, venv, "clean-install", "--yes", faults=[killed]).returncode == 137
    (run,) = (venv / ".lockguard" / "quarantine").iterdir()
    assert (run / "shadow").is_dir()  # a hard link of every file of the prefix
    listed = lockguard(project, venv, "restore", "--list", "--json")
    (entry,) = json.loads(listed.stdout)["data"]
    moved = sum(p.stat().st_size for p in (run / "files").rglob("*") if p.is_file())
    linked = sum(p.lstat().st_size for p in (run / "shadow").rglob("*") if p.is_file())
    assert entry["state"] == "incomplete" and linked > 10 * moved
    assert entry["bytes"] < moved + 200_000, entry  # its own files and journal, not the shadows
    shown = lockguard(project, venv, "restore", "--list")
    assert "restore --prune` gives" not in shown.stderr, shown.stderr
    assert f"`lockguard restore {entry['id']} --prefix" in shown.stderr
    assert lockguard(project, venv, "restore").returncode == 0
    after = lockguard(project, venv, "restore", "--list")
    row = next(line for line in after.stdout.splitlines() if entry["id"] in line)
    assert "oldlib" not in row and " 0 " in row, row  # undone: nothing quarantined or removed
