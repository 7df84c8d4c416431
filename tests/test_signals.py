"""SIGINT, SIGTERM and SIGHUP outside clean-install's transaction (issue 30, item 11): every command
ends with exit 130 and one line on stderr saying what state the prefix or project is in and the
command that finishes or undoes it; never a traceback.

Real lockguard processes; the fault seam (tests/support/fault_plugin/) sends the signal at a named
function, so where it lands is certain: a restore part-way (a second restore then finishes it,
byte for byte), clean-install while it plans, resolve before and after its commit, read-only
commands, and the start-up while lockguard's modules load (also with timed signals, sent once the
process shows it holds its handlers)."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.envs import PIP_ENV, pip_install, site_packages, tree_hashes
from tests.support.faults import fault_env

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
IDS = ["SIGINT", "SIGTERM", "SIGHUP"]
REPO = Path(__file__).resolve().parents[1]


def run(*args: str, fault: dict | None = None, cwd: Path | None = None):
    env = fault_env(fault, base={**os.environ, **PIP_ENV}) if fault else {**os.environ, **PIP_ENV}
    return subprocess.run(
        [sys.executable, "-m", "lockguard", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def signal_at(target: str, signum: int, call: int = 1) -> dict:
    return {"target": target, "action": "signal", "signum": int(signum), "call": call}


def the_interrupt_line(result) -> str:
    """Exit 130, no traceback, and exactly one line about the interrupt (the last one): its
    text."""
    assert result.returncode == 130, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    said = [line for line in result.stderr.splitlines() if "interrupted" in line]
    assert len(said) == 1, result.stderr
    assert result.stderr.rstrip("\n").splitlines()[-1] == said[0]
    return said[0]


# -- restore, clean-install ------------------------------------------------------------------------


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


def clean_install(project: Path, venv: Path, fault: dict | None = None):
    return run(
        "clean-install",
        "--intent",
        str(project / "lockguard.toml"),
        "--prefix",
        str(venv),
        "--yes",
        fault=fault,
    )


def runs(venv: Path) -> list[dict]:
    listing = run("restore", "--list", "--prefix", str(venv), "--json")
    assert listing.returncode == 0, listing.stderr
    return json.loads(listing.stdout)["data"]


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_a_restore_interrupted_part_way_says_how_far_and_a_second_restore_finishes(
    project, dirty, signum
):
    venv = dirty
    before = tree_hashes(venv)
    installed = clean_install(project, venv)
    assert installed.returncode == 0, installed.stderr
    [run_id] = [r["id"] for r in runs(venv)]
    # the second quarantined file is about to go back: one is back, the others wait
    stopped = run(
        "restore",
        "--prefix",
        str(venv),
        fault=signal_at("lockguard.io.env.undo:put_back_file", signum, call=2),
    )
    line = the_interrupt_line(stopped)
    found = re.fullmatch(
        rf"lockguard: interrupted: {re.escape(str(venv))} is half restored \(1 of (\d+) files "
        rf"back\); run `lockguard restore {run_id} --prefix {re.escape(str(venv))}` again to "
        "finish",
        line,
    )
    assert found and int(found[1]) > 1, line
    assert [r["state"] for r in runs(venv)] == ["restore-interrupted"]
    again = run("restore", run_id, "--prefix", str(venv))
    assert again.returncode == 0, again.stderr
    assert f"undid clean-install {run_id}" in again.stderr
    assert tree_hashes(venv) == before  # byte- and mode-identical to before the clean-install
    assert [r["state"] for r in runs(venv)] == ["restored"]


def test_a_restore_stopped_between_a_move_and_its_journal_line_is_counted_from_the_disk(
    project, dirty
):
    """The journal logs a file after it moved: `restore --list` and LG222 count what is really
    back, as the interrupt's line does (they used to be one behind)."""
    venv = dirty
    assert clean_install(project, venv).returncode == 0
    stopped = run(
        "restore",
        "--prefix",
        str(venv),
        fault={**signal_at("lockguard.io.env.undo:put_back_file", 15), "when": "after"},
    )
    assert "is half restored (1 of " in the_interrupt_line(stopped)
    [listed] = runs(venv)
    assert (listed["state"], listed["put_back"]) == ("restore-interrupted", 1)


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_clean_install_interrupted_while_it_plans_changes_nothing_and_says_so(
    project, dirty, signum
):
    venv = dirty
    before = tree_hashes(venv)
    stopped = clean_install(
        project, venv, fault=signal_at("lockguard.install.plan:make_plan", signum)
    )
    assert (
        the_interrupt_line(stopped) == f"lockguard: interrupted before anything changed in {venv}"
    )
    assert tree_hashes(venv) == before
    assert runs(venv) == []


def test_ctrl_c_at_the_question_is_an_interrupt_not_a_no(project, dirty):
    """Ctrl-C while "apply this plan?" waits (click turns it into its Abort): the same line as
    any interrupt before anything changed, not "aborted"."""
    venv = dirty
    script = (
        "import sys\n"
        "sys.stdin.isatty = lambda: True\n"
        "from lockguard.start import main\n"
        "main(sys.argv[1:])\n"
    )
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            "clean-install",
            "--intent",
            str(project / "lockguard.toml"),
            "--prefix",
            str(venv),
        ],
        env={**os.environ, **PIP_ENV},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stderr is not None
    said = b""
    deadline = time.monotonic() + 120
    while b"apply this plan?" not in said:
        assert time.monotonic() < deadline and child.poll() is None, said
        said += os.read(child.stderr.fileno(), 4096)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    result = subprocess.CompletedProcess(child.args, child.returncode, out, (said + err).decode())
    assert the_interrupt_line(result) == f"lockguard: interrupted before anything changed in {venv}"
    assert "aborted" not in result.stderr


# -- resolve ---------------------------------------------------------------------------------------


def write_intent(world, folder: Path, pip: list[str]) -> Path:
    return world.intent(
        folder,
        cuda="none",
        pip=pip,
        channels=["conda-forge"],
        extra="conda-from-knowledge = true\n",
    )


@pytest.fixture
def resolved(tmp_path, world) -> Path:
    folder = tmp_path / "resolved"
    write_intent(world, folder, ["jinja2"])
    first = run("resolve", "--intent", str(folder / "lockguard.toml"))
    assert first.returncode == 0, first.stderr
    return folder


def lock_bytes(folder: Path) -> dict[str, bytes]:
    return {
        name: (folder / name).read_bytes()
        for name in ("requirements.lock", "environment.yml", "conda-lock.yml")
    }


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_resolve_interrupted_before_its_commit_leaves_the_old_set_and_says_so(
    resolved, world, signum
):
    old = lock_bytes(resolved)
    write_intent(world, resolved, ["jinja2", "numpy"])
    stopped = run(
        "resolve",
        "--intent",
        str(resolved / "lockguard.toml"),
        fault=signal_at("lockguard.io.project.files:check_targets", signum),
    )
    assert the_interrupt_line(stopped) == (
        f"lockguard: interrupted before the lock set was written: the lock files in {resolved} "
        "are as they were; run `lockguard resolve` again"
    )
    assert lock_bytes(resolved) == old
    assert not [p for p in resolved.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_resolve_interrupted_in_its_commit_ends_after_it_and_says_the_new_set_is_written(
    resolved, world, signum
):
    write_intent(world, resolved, ["jinja2", "numpy"])
    stopped = run(
        "resolve",
        "--intent",
        str(resolved / "lockguard.toml"),
        fault=signal_at("lockguard.io.project.files:_stage_and_commit", signum),
    )
    assert the_interrupt_line(stopped) == (
        f"lockguard: interrupted after the new lock set was written in {resolved}; it is whole "
        "(`lockguard check` confirms it)"
    )
    assert "numpy==" in (resolved / "requirements.lock").read_text()
    check = run("check", "--intent", str(resolved / "lockguard.toml"), "--no-cache")
    assert check.returncode == 0, check.stderr


# -- read-only commands, start-up ------------------------------------------------------------------


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_check_interrupted_says_nothing_was_changed(resolved, signum):
    stopped = run(
        "check",
        "--intent",
        str(resolved / "lockguard.toml"),
        "--no-cache",
        fault=signal_at("lockguard.io.project.intent_file:load_project", signum),
    )
    assert the_interrupt_line(stopped) == "lockguard: interrupted; nothing was changed"


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_doctor_interrupted_says_nothing_was_changed(resolved, signum):
    stopped = run(
        "doctor",
        "--intent",
        str(resolved / "lockguard.toml"),
        "--python",
        sys.executable,
        fault=signal_at("lockguard.app.doctor_session:diagnose", signum),
    )
    assert the_interrupt_line(stopped) == "lockguard: interrupted; nothing was changed"


@pytest.mark.parametrize("signum", SIGNALS, ids=IDS)
def test_a_signal_while_lockguard_loads_is_an_interrupt_not_a_traceback(signum):
    """The signal lands right after the entry point holds its handlers, as the command's modules
    start to load."""
    stopped = run(
        "--version",
        fault=signal_at("lockguard.interrupts:raise_on_signals", signum) | {"when": "after"},
    )
    assert the_interrupt_line(stopped) == "lockguard: interrupted; nothing was changed"


def _holds_its_handlers(pid: int) -> bool:
    """Linux: the process catches SIGTERM (its SigCgt mask), so lockguard/start.py has run."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_ctrl_c_at_random_moments_of_the_start_up_never_shows_a_traceback(resolved):
    rounds = random.Random(30)
    for attempt in range(12):
        child = subprocess.Popen(
            [sys.executable, "-m", "lockguard", "check", "--no-cache"],
            cwd=resolved,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not _holds_its_handlers(child.pid):
            assert child.poll() is None, f"it ended before it held its handlers: {child.stderr}"
            assert time.monotonic() < deadline, "lockguard never installed its handlers"
            time.sleep(0.001)
        time.sleep(rounds.uniform(0, 0.15))
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
        assert "Traceback" not in err, (attempt, err)
        if child.returncode == 0:  # it had finished: the signal changed nothing
            assert "no findings" in err + out, err
            continue
        assert child.returncode == 130, (attempt, child.returncode, err)
        assert err.rstrip("\n").splitlines()[-1] == "lockguard: interrupted; nothing was changed"


INTERRUPT_IN_A_WEAKREF_CALLBACK = """
import signal, time, weakref
from lockguard.interrupts import Interrupted, raise_on_signals
raise_on_signals()
class Held: pass
held = Held()
ref = weakref.ref(held, lambda _: signal.raise_signal(signal.SIGINT))
try:
    del held
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.01)
    print("the interrupt was lost")
except Interrupted as exc:
    print("interrupted", exc.signum)
"""


def test_an_interrupt_that_lands_in_a_weakref_callback_is_delivered_after_it_not_lost():
    """What the start-up met in CI: Ctrl-C inside the import system's module-lock callback, which
    Python cannot raise out of ("Exception ignored in ...", a traceback, the interrupt lost)."""
    ran = subprocess.run(
        [sys.executable, "-c", INTERRUPT_IN_A_WEAKREF_CALLBACK],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ran.stdout, ran.stderr) == (f"interrupted {int(signal.SIGINT)}\n", "")


def test_an_interrupted_command_with_json_output_still_prints_an_envelope(resolved):
    stopped = run(
        "check",
        "--intent",
        str(resolved / "lockguard.toml"),
        "--no-cache",
        "--format",
        "json",
        fault=signal_at("lockguard.io.project.intent_file:load_project", signal.SIGTERM),
    )
    assert the_interrupt_line(stopped) == "lockguard: interrupted; nothing was changed"
    body = json.loads(stopped.stdout)
    assert (body["ok"], body["exit_code"], body["error"]) == (
        False,
        130,
        {"kind": "interrupted", "message": "interrupted; nothing was changed"},
    )


def test_a_clean_install_interrupted_while_it_applies_rolls_back_and_says_so(project, dirty):
    """SIGHUP (a closed terminal) now rolls back as SIGTERM and Ctrl-C do."""
    venv = dirty
    before = tree_hashes(venv)
    stopped = clean_install(
        project,
        venv,
        fault=signal_at("lockguard.io.env.transaction:record_before", signal.SIGHUP),
    )
    line = the_interrupt_line(stopped)
    assert line.startswith("lockguard: interrupted; rolled back: removed 0 files"), line
    assert line.endswith(f"({venv})")
    assert tree_hashes(venv) == before
    assert [r["state"] for r in runs(venv)] == ["aborted"]
