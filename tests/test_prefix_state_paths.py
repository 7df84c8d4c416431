"""lockguard's own state in an environment, <prefix>/.lockguard/, is never a way out of it (issue
30, items 1-3): a symlink, a FIFO, a folder or a file planted where lockguard keeps its lock, its
quarantine or a run's files is refused with exit 2, naming the path and what lies there, before
anything changes; no byte outside the prefix changes, nothing hangs, nothing ends in exit 70 or a
traceback. A command refused, or one that changed nothing, leaves no state folder behind.

Every command runs as a child lockguard process (stdin closed: not a terminal; a time bound, so a
hang fails the test). One prepared pair of prefixes per module (a dirty venv, and a copy of it
after a real clean-install), copied per test."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.envs import PIP_ENV, copy_venv, make_venv, pip_install
from tests.support.world import World, running_world

TIMEOUT = 60  # a FIFO that blocks a command fails the test here, not at pytest's end
VICTIM = b"root:x:0:0:root:/root:/bin/bash\n"


@dataclass(frozen=True)
class Prepared:
    world: World
    project: Path
    dirty: Path  # oldlib 1.0 (the lock has 2.0) and hjson (not in the lock); no .lockguard
    installed: Path  # the same after a real clean-install: one complete run in its state folder


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Prepared:
    root = tmp_path_factory.mktemp("state")
    with running_world(root / "world") as world:
        project = world.locked(root / "project", cuda="12.1", pip=["jinja2", "oldlib"])
        dirty = make_venv(root / "dirty")
        pip_install(dirty, world.pypi.url, "oldlib==1.0", "hjson")
        installed = copy_venv(dirty, root / "installed")
        done = lockguard(project, "clean-install", installed, "--yes")
        assert done.returncode == 0, done.stderr
        yield Prepared(world, project, dirty, installed)


def lockguard(project: Path, command: str, prefix: Path, *args: str, env=None):
    """`lockguard COMMAND` on `prefix` (restore takes no intent) in a child process."""
    head = command.split()
    argv = [
        *head,
        *(["--intent", str(project / "lockguard.toml")] if head[0] != "restore" else []),
        "--env" if head[0] == "check" else "--prefix",
        str(prefix),
        *args,
    ]
    return subprocess.run(
        [sys.executable, "-m", "lockguard", *argv],
        env={**os.environ, **PIP_ENV, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


COMMANDS = {
    "clean-install": ("clean-install", "--yes"),
    "restore": ("restore",),
    "restore --list": ("restore --list",),
    "check --env": ("check",),
}


def run(prepared: Prepared, name: str, prefix: Path):
    command, *args = COMMANDS[name]
    return lockguard(prepared.project, command, prefix, *args)


def fresh(prepared: Prepared, tmp_path: Path, command: str) -> tuple[Path, Path]:
    """A copy of the prepared prefix the command would change (clean-install: the dirty one, so
    that without the checks it would move files; the others: the installed one, with a run), and
    an outside folder holding a victim file."""
    template = prepared.dirty if command == "clean-install" else prepared.installed
    prefix = copy_venv(template, tmp_path / "env")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_bytes(VICTIM)
    return prefix, outside


def tree(root: Path) -> dict[str, tuple]:
    """Every path under root with its kind and bytes (a link's target): what "unchanged" means."""
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            full = Path(folder) / name
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                out[str(full.relative_to(root))] = ("link", os.readlink(full))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
                out[str(full.relative_to(root))] = ("file", digest, stat.S_IMODE(info.st_mode))
            else:
                out[str(full.relative_to(root))] = (stat.S_IFMT(info.st_mode),)
    return out


def state_of(prefix: Path) -> Path:
    state = prefix / ".lockguard"
    state.mkdir(exist_ok=True)
    return state


def refused(done, path: Path, found: str) -> None:
    """Exit 2, naming the path and what lies there; no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert f"refusing to use {path}" in done.stderr, done.stderr
    assert found in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


ALL = list(COMMANDS)


# -- the lock file: item 1 (a symlink out), item 3 (a FIFO, a folder)


@pytest.mark.parametrize("command", ALL)
def test_a_lock_that_links_out_of_the_prefix_is_refused_and_its_target_untouched(
    prepared, tmp_path, command
):
    prefix, outside = fresh(prepared, tmp_path, command)
    lock = state_of(prefix) / "lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(outside / "victim.txt")
    done = run(prepared, command, prefix)
    refused(done, lock, f"a symlink to {outside / 'victim.txt'}")
    assert (outside / "victim.txt").read_bytes() == VICTIM


@pytest.mark.parametrize("command", ALL)
def test_a_dangling_lock_link_is_refused_and_its_target_never_made(prepared, tmp_path, command):
    prefix, outside = fresh(prepared, tmp_path, command)
    lock = state_of(prefix) / "lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(outside / "made.txt")
    done = run(prepared, command, prefix)
    refused(done, lock, "a symlink to")
    assert not (outside / "made.txt").exists()


@pytest.mark.parametrize("command", ALL)
def test_a_fifo_as_the_lock_is_refused_without_blocking(prepared, tmp_path, command):
    prefix, _outside = fresh(prepared, tmp_path, command)
    lock = state_of(prefix) / "lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    refused(run(prepared, command, prefix), lock, "a FIFO")


@pytest.mark.parametrize("command", ALL)
def test_a_folder_as_the_lock_is_refused_not_a_crash(prepared, tmp_path, command):
    prefix, _outside = fresh(prepared, tmp_path, command)
    lock = state_of(prefix) / "lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()
    refused(run(prepared, command, prefix), lock, "a folder")


# -- the state folder and the quarantine: items 2 and 3


@pytest.mark.parametrize("command", ALL)
def test_a_state_folder_that_links_out_of_the_prefix_is_refused_before_anything_moves(
    prepared, tmp_path, command
):
    prefix, outside = fresh(prepared, tmp_path, command)
    state = prefix / ".lockguard"
    if state.exists():
        shutil.move(state, outside / "state")
    else:
        (outside / "state").mkdir()
    state.symlink_to(outside / "state")
    before, inside = tree(outside), tree(prefix)
    done = run(prepared, command, prefix)
    refused(done, state, f"a symlink to {outside / 'state'}")
    assert tree(outside) == before
    assert tree(prefix) == inside


@pytest.mark.parametrize("command", ALL)
def test_a_state_folder_that_is_a_file_is_refused_with_what_it_is(prepared, tmp_path, command):
    prefix, _outside = fresh(prepared, tmp_path, command)
    state = prefix / ".lockguard"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("not a folder\n")
    done = run(prepared, command, prefix)
    refused(done, state, "a regular file")
    assert "owns it" not in done.stderr  # not a permission problem


@pytest.mark.parametrize("command", ALL)
def test_a_quarantine_that_links_out_of_the_prefix_is_refused_before_anything_moves(
    prepared, tmp_path, command
):
    prefix, outside = fresh(prepared, tmp_path, command)
    quarantine = state_of(prefix) / "quarantine"
    if quarantine.exists():
        shutil.move(quarantine, outside / "quarantine")
    else:
        (outside / "quarantine").mkdir()
    quarantine.symlink_to(outside / "quarantine")
    before, inside = tree(outside), tree(prefix)
    done = run(prepared, command, prefix)
    refused(done, quarantine, f"a symlink to {outside / 'quarantine'}")
    assert tree(outside) == before
    assert tree(prefix) == inside


def test_a_run_folder_that_links_out_is_refused(prepared, tmp_path):
    prefix, outside = fresh(prepared, tmp_path, "restore")
    (run_folder,) = (prefix / ".lockguard" / "quarantine").iterdir()
    shutil.move(run_folder, outside / "run")
    run_folder.symlink_to(outside / "run")
    before = tree(outside)
    for command in ALL:
        refused(run(prepared, command, prefix), run_folder, "a symlink to")
    assert tree(outside) == before


@pytest.mark.parametrize("kind", ["a FIFO", "a symlink to"])
def test_a_folder_of_a_runs_files_that_is_not_one_is_refused_before_the_undo_moves_anything(
    prepared, tmp_path, kind
):
    """files/lib as a FIFO (or a link out): restore would remove what the run installed, then
    stop at the first file it cannot put back; it is refused before either."""
    prefix, outside = fresh(prepared, tmp_path, "restore")
    (lib,) = (prefix / ".lockguard" / "quarantine").glob("*/files/lib")
    shutil.rmtree(lib)
    if kind == "a FIFO":
        os.mkfifo(lib)
    else:
        (outside / "lib").mkdir()
        lib.symlink_to(outside / "lib")
    environment = {k: v for k, v in tree(prefix).items() if not k.startswith(".lockguard")}
    done = run(prepared, "restore", prefix)
    assert done.returncode == 2, done.stderr
    assert str(lib) in done.stderr and kind in done.stderr, done.stderr
    assert {k: v for k, v in tree(prefix).items() if not k.startswith(".lockguard")} == environment


# -- every path lockguard opens in a real run's state folder ---------------------------------------


def state_paths(installed: Path) -> list[str]:
    """Every path under a real run's state folder and the folder itself; under files/ (the
    environment's own files, put back as they are: a quarantined symlink stays one) only its first
    folder and its first file."""
    state = installed / ".lockguard"
    out = [".lockguard"]
    for folder, dirs, files in os.walk(state):
        dirs.sort()
        relative = Path(folder).relative_to(installed)
        if "files" in relative.parts:
            continue
        out += [str(relative / d) for d in dirs]
        out += [str(relative / f) for f in files]
    for files in state.glob("quarantine/*/files"):
        first = sorted(files.iterdir())[0]
        out.append(str(first.relative_to(installed)))
        leaf = min(p for p in files.rglob("*") if p.is_file())
        out.append(str(leaf.relative_to(installed)))
    return sorted(out)


def replace(path: Path, outside: Path, kind: str) -> None:
    """`path` becomes a symlink out (to a folder for a folder, to a file for a file), a FIFO or a
    folder."""
    was_folder = path.is_dir() and not path.is_symlink()
    if was_folder:
        shutil.rmtree(path)
    else:
        path.unlink()
    if kind == "symlink":
        path.symlink_to(outside / "folder" if was_folder else outside / "victim.txt")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


def test_every_state_path_replaced_by_a_link_a_fifo_or_a_folder_is_never_a_way_out(
    prepared, tmp_path
):
    """Walks a real run's state folder; each path in turn becomes a symlink out of the prefix, a
    FIFO and a folder; restore, clean-install and check --env then run on it: no byte outside
    changes, no hang, no exit 70, no traceback."""
    paths = state_paths(prepared.installed)
    assert ".lockguard/lock" in paths and any(p.endswith("manifest.json") for p in paths)
    failures = []
    for number, relative in enumerate(paths):
        for kind in ("symlink", "fifo", "folder"):
            case = tmp_path / f"{number}-{kind}"
            prefix = copy_venv(prepared.installed, case / "env")
            outside = case / "outside"
            (outside / "folder").mkdir(parents=True)
            (outside / "victim.txt").write_bytes(VICTIM)
            (outside / "folder" / "victim.txt").write_bytes(VICTIM)
            replace(prefix / relative, outside, kind)
            before = tree(outside)
            # clean-install without --yes: it locks, checks, finishes an interrupted run and
            # plans, then stops at the question (stdin is not a terminal); pip never runs
            for command, *args in (("restore",), ("clean-install",), ("check",)):
                try:
                    done = lockguard(prepared.project, command, prefix, *args)
                except subprocess.TimeoutExpired:
                    failures.append((relative, kind, command, "hangs"))
                    continue
                if done.returncode == 70 or "Traceback" in done.stderr or tree(outside) != before:
                    failures.append((relative, kind, command, done.returncode, done.stderr[-800:]))
            shutil.rmtree(case)
    assert not failures, failures


# -- a command that changed nothing leaves nothing


def test_a_refused_restore_leaves_no_state_folder(prepared, tmp_path):
    prefix = copy_venv(prepared.dirty, tmp_path / "env")
    done = lockguard(prepared.project, "restore", prefix, "20261201-000000-000000-00")
    assert done.returncode == 2, done.stderr
    assert not (prefix / ".lockguard").exists()


def test_a_clean_install_refused_for_want_of_a_terminal_leaves_no_state_folder(prepared, tmp_path):
    prefix = copy_venv(prepared.dirty, tmp_path / "env")
    done = lockguard(prepared.project, "clean-install", prefix)  # stdin is not a terminal
    assert done.returncode == 2, done.stderr
    assert "stdin is not a terminal" in done.stderr
    assert not (prefix / ".lockguard").exists()


def test_a_check_of_a_hanging_interpreter_leaves_no_state_folder(prepared, tmp_path):
    prefix = copy_venv(prepared.dirty, tmp_path / "env")
    python = prefix / "bin" / "python"
    python.unlink()
    python.write_text("#!/bin/sh\nsleep 600\n")
    python.chmod(0o755)
    done = lockguard(prepared.project, "check", prefix, env={"LOCKGUARD_INTERPRETER_TIMEOUT": "1"})
    assert done.returncode == 2, done.stderr
    assert "did not answer" in done.stderr
    assert not (prefix / ".lockguard").exists()


def test_a_check_and_a_dry_run_of_a_clean_prefix_leave_no_state_folder(prepared, tmp_path):
    prefix = copy_venv(prepared.dirty, tmp_path / "env")
    lockguard(prepared.project, "check", prefix)
    lockguard(prepared.project, "clean-install", prefix, "--dry-run")
    assert not (prefix / ".lockguard").exists()


def test_a_state_folder_that_was_there_stays(prepared, tmp_path):
    prefix = copy_venv(prepared.dirty, tmp_path / "env")
    (prefix / ".lockguard").mkdir()
    assert lockguard(prepared.project, "restore", prefix).returncode == 2  # nothing to restore
    assert (prefix / ".lockguard").is_dir()
