"""Hostile state for clean-install and restore (issue 22): runs racing on one prefix (the kernel
lock, a pause inside the transaction through the tests' fault seam, so the race is certain), a full
file system (the seam raising ENOSPC, and a real small tmpfs where root may mount one), a file or
an interpreter the user cannot read (a real unprivileged user through setpriv where the machine
has one, else the seam raising EACCES), an immutable file, SIGTERM, and restore after the user
removed what the run installed. Each ends in the documented exit code, with nothing half done."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lockguard.io.kernel_lock import read_holder
from tests.support.envs import (
    ENV_PYTHON,
    PIP_ENV,
    copy_venv,
    pip_install,
    site_packages,
    tree_hashes,
)
from tests.support.faults import fault_env, release, wait_paused
from tests.support.wheels import build_wheel

# inside the transaction: after the moves, before pip
RECORD_BEFORE = "lockguard.io.env.transaction:record_before"


@pytest.fixture
def project(world, tmp_path) -> Path:
    return world.locked(tmp_path / "project", cuda="12.1", pip=["jinja2", "oldlib"])


@pytest.fixture
def dirty(world, venv) -> Path:
    """A venv the lock changes: oldlib 1.0 (the lock has 2.0), hjson (not in the lock), a stray
    library."""
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    (site_packages(venv) / "libstray.so.1").write_bytes(b"\x7fELF stray")
    return venv


def arguments(project: Path, venv: Path, *args: str) -> list[str]:
    """lockguard's arguments for command args[0] on the project's intent and `venv`."""
    return [
        args[0],
        *(["--intent", str(project / "lockguard.toml")] if args[0] != "restore" else []),
        "--prefix",
        str(venv),
        *args[1:],
    ]


def command(project: Path, venv: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "lockguard", *arguments(project, venv, *args)]


def child(project: Path, venv: Path, *args: str, faults=()) -> subprocess.CompletedProcess:
    return subprocess.run(
        command(project, venv, *args),
        env=fault_env(*faults, base={**os.environ, **PIP_ENV}),
        capture_output=True,
        text=True,
        timeout=300,
    )


def start(project: Path, venv: Path, *args: str, faults=()) -> subprocess.Popen:
    return subprocess.Popen(
        command(project, venv, *args),
        env=fault_env(*faults, base={**os.environ, **PIP_ENV}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def pause(folder: Path, name: str, target: str = RECORD_BEFORE, call: int = 1) -> dict:
    return {"target": target, "action": "pause", "dir": str(folder), "name": name, "call": call}


def stderr_line_with(process: subprocess.Popen, text: str, timeout: float = 120) -> str:
    """The first line of a running child's stderr that contains `text` (a waiting child prints
    it, then blocks on the lock: nothing else would end a plain readline)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.5)
        if ready:
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            if text in line:
                return line.rstrip("\n")
    raise AssertionError(f"no line with {text!r} on stderr: {seen}")


def runs(lg, venv: Path) -> list[dict]:
    listing = lg("restore", "--list", "--prefix", str(venv), "--json")
    assert listing.exit_code == 0, listing.stderr
    return json.loads(listing.stdout)["data"]


def check_env(lg, project: Path, venv: Path, *args: str):
    result = lg(
        "check",
        "--intent",
        str(project / "lockguard.toml"),
        "--env",
        str(venv),
        "--format",
        "json",
        *args,
    )
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)["data"]["findings"]


# -- runs racing on one prefix --------------------------------------------------------------------


def test_two_clean_installs_and_a_restore_racing_on_one_prefix(project, dirty, lg, tmp_path):
    venv = dirty
    before = tree_hashes(venv)
    first = start(project, venv, "clean-install", "--yes", faults=[pause(tmp_path, "first")])
    # it holds the lock, half-way through its transaction
    wait_paused(tmp_path, "first", process=first)
    pid = first.pid
    holder = read_holder(venv / ".lockguard" / "lock")
    assert holder is not None and holder.command == "clean-install" and holder.pid == pid
    busy = f"clean-install {holder.run} (pid {pid})"
    for args in (["clean-install", "--yes", "--no-wait"], ["restore", "--no-wait"]):
        refused = child(project, venv, *args)
        assert refused.returncode == 2, refused.stderr
        assert f"is in use by {busy}" in refused.stderr and "Traceback" not in refused.stderr
    refused = lg(
        "check", "--intent", str(project / "lockguard.toml"), "--env", str(venv), "--no-wait"
    )
    assert refused.exit_code == 2 and busy in refused.stderr
    (live,) = runs(lg, venv)
    assert live["id"] == holder.run and live["state"] == "running"  # never listed as interrupted

    second = start(project, venv, "clean-install", "--yes")
    assert stderr_line_with(second, "waiting for") == f"waiting for {busy} on {venv}"
    release(tmp_path, "first")
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    # the first run's journal was live, not undone
    assert "nothing to change" in out and "interrupted" not in err
    assert [r["state"] for r in runs(lg, venv)] == ["complete"]
    assert check_env(lg, project, venv) == (0, [])
    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before  # the first run is whole: its restore gives the tree back


def test_a_restore_holds_the_prefix_until_every_file_is_back(project, dirty, lg, tmp_path):
    venv = dirty
    before = tree_hashes(venv)
    assert lg(*arguments(project, venv, "clean-install", "--yes")).exit_code == 0
    (run,) = runs(lg, venv)
    restoring = start(
        project,
        venv,
        "restore",
        faults=[pause(tmp_path, "restore", "lockguard.io.env.undo:put_back_file", call=2)],
    )
    wait_paused(tmp_path, "restore", process=restoring)
    pid = restoring.pid
    busy = f"restore {run['id']} (pid {pid})"
    refused = child(project, venv, "clean-install", "--yes", "--no-wait")
    assert refused.returncode == 2 and f"is in use by {busy}" in refused.stderr
    waiting = start(project, venv, "clean-install", "--yes")
    assert stderr_line_with(waiting, "waiting for") == f"waiting for {busy} on {venv}"
    release(tmp_path, "restore")
    assert restoring.wait(timeout=300) == 0
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    # planned from the whole restore
    assert "oldlib 1.0  (upgrade to 2.0" in out and "hjson 3.1.0  (not in the lock" in out
    assert "interrupted" not in err
    assert [r["state"] for r in runs(lg, venv)] == ["restored", "complete"]
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


def test_a_lock_left_by_a_killed_run_is_taken_over_and_its_journal_undone(
    project, dirty, lg, tmp_path
):
    venv = dirty
    before = tree_hashes(venv)
    first = start(project, venv, "clean-install", "--yes", faults=[pause(tmp_path, "first")])
    wait_paused(tmp_path, "first", process=first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    (dead,) = runs(lg, venv)
    assert dead["state"] == "incomplete"  # its process is gone: no one holds the lock
    # the kernel dropped the lock
    again = child(project, venv, "clean-install", "--yes", "--no-wait")
    assert again.returncode == 0, again.stderr
    assert f"clean-install {dead['id']} was interrupted; undone" in again.stderr
    assert [r["state"] for r in runs(lg, venv)] == ["restored", "complete"]
    assert lg("restore", "--prefix", str(venv)).exit_code == 0 and tree_hashes(venv) == before


# -- faults end in the documented exit code --------------------------------------------------------


@pytest.mark.parametrize(
    "where, target, said",
    [
        ("writing the manifest", "lockguard.io.env.quarantine:write_atomic", "nothing was changed"),
        (
            "after the moves",
            "lockguard.io.env.transaction:write_atomic",
            "rolled back: removed 0 files",
        ),
    ],
)
def test_no_space_left_is_rolled_back_with_exit_5_and_its_cause(
    project, dirty, lg, where, target, said
):
    venv = dirty
    before = tree_hashes(venv)
    enospc = {"target": target, "action": "raise", "errno": 28}
    result = child(project, venv, "clean-install", "--yes", faults=[enospc])
    assert result.returncode == 5, result.stderr
    assert "No space left on device" in result.stderr and said in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert tree_hashes(venv) == before
    assert all(r["state"] == "aborted" for r in runs(lg, venv))  # nothing left half done
    assert not [f for f in check_env(lg, project, venv)[1] if f["code"] == "LG222"]


def fill(folder: Path, leave: int) -> Path:
    """Fill folder's file system, then give back `leave` bytes."""
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        chunk = b"\0" * (1 << 20)
        try:
            while True:
                handle.write(chunk)
                handle.flush()
        except OSError:
            pass
    size = filler.stat().st_size
    with open(filler, "r+b") as handle:
        handle.truncate(max(0, size - leave))
    return filler


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 48 MB tmpfs (root may mount one; skipped elsewhere), unmounted afterwards."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("when", ["full from the start", "full after the moves", "filled by pip"])
def test_a_full_file_system_is_rolled_back_with_exit_5(
    world, venv_template, small_tmpfs, tmp_path, lg, when
):
    world.pypi.add(build_wheel(world.wheels, "bigpkg", "1.0", padding=4 << 20))  # more than is left
    project = world.locked(tmp_path / "project", cuda="12.1", pip=["bigpkg", "oldlib"])
    venv = copy_venv(venv_template, small_tmpfs / "env")
    pip_install(venv, world.pypi.url, "oldlib==1.0")
    site = site_packages(venv)
    for n in range(80):  # enough journal lines that an undo on a full disk cannot write them all
        (site / f"libstray{n:02}.so.1").write_bytes(b"\x7fELF stray")
    before = tree_hashes(venv)
    # the moves are renames: no space needed; then nothing is left
    if when == "full after the moves":
        paused = start(project, venv, "clean-install", "--yes", faults=[pause(tmp_path, "full")])
        wait_paused(tmp_path, "full", process=paused)
        filler = fill(small_tmpfs, 0)
        release(tmp_path, "full")
        out, err = paused.communicate(timeout=300)
        code = paused.returncode
    else:
        filler = fill(small_tmpfs, 4096 if when == "full from the start" else 512 << 10)
        result = lg(*arguments(project, venv, "clean-install", "--yes"))
        code, err = result.exit_code, result.stderr
    assert code == 5, err
    assert (
        "No space left on device" in err and "Traceback" not in err and "internal error" not in err
    )
    filler.unlink()
    assert tree_hashes(venv) == before
    listed = runs(lg, venv)
    assert all(r["state"] == "aborted" for r in listed), (
        listed,
        err,
    )  # the run's end is recorded, even on a full disk
    assert not list((venv / ".lockguard").rglob("*.tmp"))  # no half-written state file
    assert not [f for f in check_env(lg, project, venv)[1] if f["code"] == "LG222"]


def test_sigterm_rolls_back_and_exits_130_saying_so(project, dirty, lg):
    venv = dirty
    before = tree_hashes(venv)
    term = {"target": RECORD_BEFORE, "action": "signal", "signum": signal.SIGTERM}
    result = child(project, venv, "clean-install", "--yes", faults=[term])
    assert result.returncode == 130, result.stderr
    assert (
        "interrupted; rolled back: removed 0 files the run had installed, put back" in result.stderr
    )
    assert tree_hashes(venv) == before
    assert [r["state"] for r in runs(lg, venv)] == ["aborted"]


def test_an_immutable_file_is_reported_by_the_dry_run_and_refused_before_anything_moves(
    project, dirty, lg
):
    venv = dirty
    victim = site_packages(venv) / "oldlib" / "__init__.py"  # a file of the outgoing oldlib 1.0
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(victim)], capture_output=True).returncode
    ):
        pytest.skip("no chattr +i on this file system")
    try:
        before = tree_hashes(venv)
        dry = lg(*arguments(project, venv, "clean-install", "--dry-run"))
        assert dry.exit_code == 1
        assert f"{os.path.relpath(victim, venv)}: immutable (chattr +i)" in dry.stdout
        result = lg(*arguments(project, venv, "clean-install", "--yes"))
        assert (
            result.exit_code == 5
            and "cannot move 1 file into the quarantine; nothing was changed" in result.stderr
        )
        assert tree_hashes(venv) == before and not (venv / ".lockguard" / "quarantine").exists()
    finally:
        subprocess.run(["chattr", "-i", str(victim)], check=False)


# -- an unprivileged user: a mode-000 file, an interpreter behind a folder it cannot enter ---------


def _as_nobody() -> list[str] | None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def open_folder():
    """A folder every user may enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="lg-unprivileged-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def nobody_runs(argv: list[str], home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **PIP_ENV, "HOME": str(home), "LOCKGUARD_CACHE_DIR": str(home / "cache")}
    return subprocess.run(
        [*_as_nobody(), *argv], env=env, capture_output=True, text=True, timeout=300, cwd=home
    )


def _skip_unless_nobody_runs_lockguard(home: Path) -> None:
    """Skip where lockguard cannot run as uid 65534: no root or setpriv, or an interpreter that
    user cannot start (e.g. one whose libpython lies in root's home)."""
    if _as_nobody() is None:
        pytest.skip("needs root and setpriv to run lockguard as an unprivileged user")
    runs = nobody_runs([sys.executable, "-c", "pass"], home)
    if runs.returncode != 0:
        pytest.skip(
            f"the unprivileged user cannot run the tests' interpreter here: {runs.stderr[-200:]}"
        )


def test_a_mode_000_file_of_an_outgoing_package_is_refused_up_front(
    world, project, open_folder, lg
):
    _skip_unless_nobody_runs_lockguard(open_folder)
    # its own copy of the interpreter: nothing of it behind root's folders
    venv = open_folder / "env"
    subprocess.run(
        [ENV_PYTHON, "-m", "venv", "--copies", str(venv)], check=True, capture_output=True
    )
    pip_install(venv, world.pypi.url, "oldlib==1.0")
    shutil.copytree(project, open_folder / "project")
    subprocess.run(["chown", "-R", "65534:65534", str(open_folder)], check=True)
    probe = nobody_runs([str(venv / "bin" / "python"), "-c", "import sys"], open_folder)
    if probe.returncode != 0:
        pytest.skip(
            f"the unprivileged user cannot run a copied interpreter here: {probe.stderr[-200:]}"
        )
    locked = site_packages(venv) / "oldlib" / "__init__.py"
    locked.chmod(0o000)  # its owner cannot read it either
    before = tree_hashes(venv)
    args = [
        sys.executable,
        "-m",
        "lockguard",
        "clean-install",
        "--intent",
        str(open_folder / "project" / "lockguard.toml"),
        "--prefix",
        str(venv),
    ]
    dry = nobody_runs([*args, "--dry-run"], open_folder)
    assert dry.returncode == 1, dry.stderr
    assert f"{os.path.relpath(locked, venv)}: unreadable by this user (mode 000)" in dry.stdout
    result = nobody_runs([*args, "--yes"], open_folder)
    assert result.returncode == 5, result.stderr
    assert "cannot move 1 file into the quarantine; nothing was changed" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert tree_hashes(venv) == before
    # no empty quarantine folder left behind
    assert not (venv / ".lockguard" / "quarantine").exists()


def test_an_interpreter_behind_a_folder_the_user_cannot_enter_is_bad_input(
    project, venv, open_folder
):
    _skip_unless_nobody_runs_lockguard(open_folder)
    env = copy_venv(venv, open_folder / "env")
    private = open_folder / "private"
    private.mkdir(mode=0o700)
    shutil.copy(os.path.realpath(env / "bin" / "python"), private / "python3")
    for name in ("python", "python3"):
        (env / "bin" / name).unlink()
        (env / "bin" / name).symlink_to(private / "python3")
    shutil.copytree(project, open_folder / "project")
    intent = ["--intent", str(open_folder / "project" / "lockguard.toml")]
    for argv in (
        ["check", *intent, "--env", str(env)],
        ["clean-install", *intent, "--prefix", str(env), "--dry-run"],
        ["clean-install", *intent, "--python", str(env / "bin" / "python"), "--dry-run"],
    ):
        result = nobody_runs([sys.executable, "-m", "lockguard", *argv], open_folder)
        assert result.returncode == 2, (argv, result.stderr)
        assert f"cannot run {env / 'bin' / 'python'}: Permission denied" in result.stderr, (
            result.stderr
        )
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


# -- restore after the user removed what the run installed -----------------------------------------


@pytest.mark.parametrize("removal", ["pip uninstall", "rm -rf"])
def test_restore_skips_what_the_user_removed_since_and_puts_the_quarantine_back(
    project, dirty, lg, removal
):
    venv = dirty
    before = tree_hashes(venv)
    assert lg(*arguments(project, venv, "clean-install", "--yes")).exit_code == 0
    site = site_packages(venv)
    if removal == "pip uninstall":
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "uninstall", "-y", "oldlib", "jinja2"],
            capture_output=True,
            text=True,
            env={**os.environ, **PIP_ENV},
        )
        assert done.returncode == 0, done.stderr
    else:
        shutil.rmtree(site / "oldlib")
        shutil.rmtree(next(site.glob("oldlib-2.0.dist-info")))
    result = lg("restore", "--prefix", str(venv))
    assert result.exit_code == 0, result.stderr
    assert "already gone (removed since, by `pip uninstall` or by hand): " in result.stderr
    assert "oldlib 2.0" in result.stderr and "; skipped" in result.stderr
    assert tree_hashes(venv) == before  # the quarantine is back, byte for byte
    assert [r["state"] for r in runs(lg, venv)] == ["restored"]


def test_a_journal_line_cut_short_by_a_full_disk_is_taken_back(tmp_path, monkeypatch):
    """A part line in the middle of the journal made every later reading refuse the run (seen on a
    real full tmpfs): an event written in part is cut off again, so the journal holds whole
    lines."""
    from lockguard.io.env import quarantine

    q = quarantine.Quarantine(tmp_path, "20261201-000000-000000-aa")
    q.root.mkdir(parents=True)
    q.log(event="begin")
    real_write = os.write

    def half(fd, data):
        real_write(fd, data[: len(data) // 2])
        return len(data) // 2

    monkeypatch.setattr(quarantine.os, "write", half)
    with pytest.raises(OSError, match="No space left on device"):
        q.log(event="moved", path="lib/a.so")
    monkeypatch.setattr(quarantine.os, "write", real_write)
    q.log(event="aborted")
    q.close()
    assert [e["event"] for e in q.journal()] == ["begin", "aborted"]
