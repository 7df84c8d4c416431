"""The bad-input corpus (tests/support/fuzz_corpus.py) run against the real CLI.

For every case: the exit code is one the contract allows (2 bad input, 4 unreachable, 3
unsatisfiable; 1 where a damaged lock is a finding), no traceback and no internal error, the
message names the file (and the line where the input has lines), and no file changed outside the
command's declared outputs (a tree hash of the project and of its parent folder). Failures are
collected per family so one run shows all of them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support import fuzz_corpus
from tests.support.envs import ENV_PYTHON

MINIMUM_INPUTS = 600  # the floor for the whole corpus


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    from tests.support.world import locked_mixed_project, running_world

    root = tmp_path_factory.mktemp("fuzz")
    with running_world(root) as world:
        project = locked_mixed_project(world, root / "template")
        (project / "requirements.txt").write_text("jinja2==1.0\n")
        yield project


@pytest.fixture(scope="module")
def corpus(template):
    return fuzz_corpus.project_corpus(template)


def _fill(argv: list[str], project: Path) -> list[str]:
    return [
        a.replace("{project}", str(project)).replace("{intent}", str(project / "lockguard.toml"))
        for a in argv
    ]


def _snapshot(folder: Path, skip: tuple[str, ...] = (".lockguard", "__pycache__")) -> dict:
    out = {}
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(base, d))]:
            full = os.path.join(base, name)
            rel = os.path.relpath(full, folder)
            try:
                info = os.lstat(full)
                if os.path.islink(full):
                    out[rel] = ("link", os.readlink(full))
                elif not os.path.isfile(full) or info.st_size > 8 * 1024 * 1024:
                    out[rel] = ("special", info.st_mode, info.st_size)
                else:
                    out[rel] = ("file", tree_hashes_one(full), info.st_mode & 0o7777)
            except OSError as exc:
                out[rel] = ("error", str(exc))
    return out


def tree_hashes_one(path: str) -> str:
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def run_case(case, template: Path, workdir: Path, lg) -> str | None:
    """None when the case behaved as the contract says, else what went wrong."""
    case_root = workdir / re.sub(r"[^A-Za-z0-9_.-]", "_", case.id)[:80]
    project = case_root / "project"
    shutil.copytree(template, project, symlinks=True)
    case.setup(project)
    before = _snapshot(case_root)
    argv = _fill(case.argv, project)
    ran = _invoke(argv, project, case.env, case.process, lg)
    if ran is None:
        return "hung (no answer within 60 s)"
    code, stdout, stderr = ran
    problems = _contract_problems(code, stdout, stderr, case.expect, case.names)
    if code == 2 and case.line and not re.search(r"\.(toml|lock|yml|txt):\d+", stderr):
        problems.append("the message gives no line")
    if re.search(r":\?(\D|$)", stderr):
        problems.append("a '?' for the line")
    after = _snapshot(case_root)
    changed = sorted(
        k
        for k in set(before) | set(after)
        if before.get(k) != after.get(k) and not any(k == f"project/{o}" for o in case.outputs)
    )
    if changed:
        problems.append(f"changed {changed[:4]}")
    shutil.rmtree(case_root, ignore_errors=True)
    if problems:
        return f"{case.id}: " + "; ".join(problems) + f"\n      stderr: {stderr.strip()[:300]!r}"
    return None


def _invoke(
    argv: list[str], cwd: Path, env: dict, process: bool, lg
) -> tuple[int, str, str] | None:
    """(exit code, stdout, stderr) of one command, in a subprocess (inputs that could hang a
    process) or in-process; None when the subprocess gave no answer within 60 s."""
    if process:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "lockguard", *argv],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=cwd,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return None
        return done.returncode, done.stdout, done.stderr
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = lg(*argv)
    finally:
        os.chdir(here)
    return result.exit_code, result.stdout, result.stderr


def _contract_problems(code: int, stdout: str, stderr: str, expect, names: str | None) -> list[str]:
    """What every case is held to: an allowed exit code, no traceback, and a bad-input message
    that names the file and stays short."""
    problems = []
    if code not in expect:
        problems.append(f"exit {code}, expected {sorted(expect)}")
    if (
        "Traceback" in stdout + stderr
        or "internal error" in stderr
        or "Fatal Python error" in stderr
    ):
        problems.append("traceback or internal error")
    if code == 2 and names and names not in stderr:
        problems.append(f"the message does not name {names}")
    if code == 2 and len(stderr) > 4000:
        problems.append(f"a {len(stderr)}-character message")
    return problems


FAMILIES = [
    "intent-value",
    "unknown-key",
    "toml-truncated",
    "toml-syntax",
    "intent-utf8",
    "hostile-output",
    "hostile-target",
    "lock-damage",
    "lock-utf8",
    "conda-lock-shape",
    "special-file",
    "cli",
    "pyproject",
]


@pytest.mark.parametrize("family", FAMILIES)
def test_family(family, corpus, template, tmp_path, lg, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    cases = [c for c in corpus if c.family == family]
    assert cases, f"no cases for {family}"
    failures = [f for f in (run_case(c, template, tmp_path, lg) for c in cases) if f]
    assert not failures, (
        f"{len(failures)} of {len(cases)} cases broke the contract:\n  " + "\n  ".join(failures)
    )


def test_the_corpus_is_wide_and_distinct(corpus):
    ids = [c.id for c in corpus]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    from tests.support import fuzz_index

    env = _env_corpus()
    env_ids = [c.id for c in env]
    assert len(env_ids) == len(set(env_ids)), "env case ids must be unique"
    assert len(env) >= 150, f"{len(env)} environment cases; the family must hold at least 150"
    assert {c.command for c in env} == {"check", "dry-run", "list", "restore", "doctor"}
    total = len(corpus) + len(fuzz_index.index_corpus()) + len(env)
    assert total >= MINIMUM_INPUTS, (
        f"{total} inputs; the corpus must hold at least {MINIMUM_INPUTS}"
    )
    assert {c.family for c in corpus} == set(FAMILIES)


# -- the index family: one small index whose page, metadata or connection misbehaves ---------------


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    from tests.support.index_server import LocalIndex
    from tests.support.wheels import build_wheel

    root = tmp_path_factory.mktemp("fuzz-index")
    index = LocalIndex(root / "index").start()
    index.add(build_wheel(root / "w", "jinja2", "1.0", requires=["markupsafe>=2.0"]))
    index.add(build_wheel(root / "w", "markupsafe", "2.1.5"))
    yield index
    index.stop()


def _valid_page(index) -> dict:
    import json
    import urllib.request

    request = urllib.request.Request(
        f"{index.url}/jinja2/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_index_family(small_index, tmp_path, lg, monkeypatch):
    from tests.support import fuzz_index
    from tests.support.index_server import Faults

    monkeypatch.setenv("LOCKGUARD_HTTP_TIMEOUT", "1")
    page = _valid_page(small_index)
    cases = fuzz_index.index_corpus()
    failures = []
    for number, case in enumerate(cases):
        small_index.faults = Faults()
        case.arm(small_index, page)
        project = tmp_path / f"case-{number}"
        project.mkdir()
        (project / "lockguard.toml").write_text(
            'python = "3.11"\ncuda = "none"\nchannels = []\n'
            f'indexes = ["{small_index.url}"]\npip = ["jinja2"]\n'
        )
        # no good page from before
        monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path / f"cache-{number}"))
        before = _snapshot(tmp_path / f"case-{number}")
        result = lg("resolve", "--intent", str(project / "lockguard.toml"))
        problems = []
        if result.exit_code not in case.expect:
            problems.append(f"exit {result.exit_code}, expected {sorted(case.expect)}")
        if (
            "Traceback" in result.output
            or "internal error" in result.stderr
            or "exception calling" in result.stderr
        ):
            problems.append("traceback or internal error")
        if result.exit_code == 4 and "127.0.0.1" not in result.stderr:
            problems.append("the message does not name the index")
        if len(result.stderr) > 4000:
            problems.append(f"a {len(result.stderr)}-character message")
        lock = project / "requirements.lock"
        if result.exit_code == 0 and "markupsafe==" not in lock.read_text():
            problems.append("a lock of jinja2 without markupsafe")
        after = _snapshot(project)
        changed = sorted(
            k
            for k in set(before) | set(after)
            if before.get(k) != after.get(k)
            and not (result.exit_code == 0 and k == "requirements.lock")
        )
        if changed:
            problems.append(f"changed {changed}")
        if problems:
            failures.append(
                f"{case.name}: "
                + "; ".join(problems)
                + f"\n      stderr: {result.stderr.strip()[:300]!r}"
            )
    small_index.faults = Faults()
    assert len(cases) >= 120
    assert not failures, (
        f"{len(failures)} of {len(cases)} cases broke the contract:\n  " + "\n  ".join(failures)
    )


# -- the environment family: broken environments and misbehaving interpreters ----------------------


@pytest.fixture(scope="module")
def env_world(tmp_path_factory):
    """A locked project (jinja2 and what it needs, no CUDA) and a venv that matches its lock."""
    from lockguard.cli.boundary import run
    from tests.support import fuzz_env
    from tests.support.world import running_world

    root = tmp_path_factory.mktemp("fuzz-env")
    project = root / "project"
    with running_world(root) as world:
        world.intent(project, cuda="none", pip=["jinja2"])
        assert run(["resolve", "--intent", str(project / "lockguard.toml")]) == 0
    pins = dict(
        re.findall(
            r"^([A-Za-z0-9_.-]+)==([^ \\;]+)", (project / "requirements.lock").read_text(), re.M
        )
    )
    assert "jinja2" in pins, pins
    venv = root / "venv-template"
    subprocess.run(
        [ENV_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    fuzz_env.fill_venv(venv, pins)
    return project, venv


def _env_case_root(case, workdir: Path) -> Path:
    return workdir / re.sub(r"[^A-Za-z0-9_.-]", "_", case.id)[:100]


def run_env_case(case, project: Path, template: Path, workdir: Path, lg) -> str | None:
    """None when the case behaved as the contract says, else what went wrong."""
    from tests.support.envs import copy_venv

    case_root = _env_case_root(case, workdir)
    case_root.mkdir(parents=True)
    prefix = case_root / "env"
    if case.shape == "venv":
        copy_venv(template, prefix)
    # "fake", "conda" and "none": the damage makes the environment (or what stands in for it)
    case.damage(prefix)
    intent = project / "lockguard.toml"
    argv = case.arguments(prefix, intent)
    before = (_snapshot(case_root, skip=()), _snapshot(project))
    ran = _invoke(
        argv, case_root, {"LOCKGUARD_INTERPRETER_TIMEOUT": "2", **case.env}, case.process, lg
    )
    if ran is None:
        _cleanup(case_root)
        return f"{case.id}: hung (no answer within 60 s)"
    code, stdout, stderr = ran
    names = case.names.replace("{prefix}", str(prefix)) if case.names else None
    problems = _contract_problems(code, stdout, stderr, case.expect, names)
    after = (_snapshot(case_root, skip=()), _snapshot(project))
    for label, old, new in (
        ("the prefix", before[0], after[0]),
        ("the project", before[1], after[1]),
    ):
        changed = sorted(
            k
            for k in set(old) | set(new)
            if old.get(k) != new.get(k) and not k.endswith("/.lockguard/lock")
        )  # the prefix's kernel lock: created empty, by design
        if changed:
            problems.append(f"changed {label}: {changed[:4]}")
    _cleanup(case_root)
    if problems:
        return f"{case.id}: " + "; ".join(problems) + f"\n      stderr: {stderr.strip()[:300]!r}"
    return None


def _cleanup(folder: Path) -> None:
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(base, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755 if name in dirs else 0o644)
    shutil.rmtree(folder, ignore_errors=True)


def _env_corpus():
    from tests.support import fuzz_env

    return fuzz_env.env_corpus()


ENV_KINDS = sorted({c.kind for c in _env_corpus()})


@pytest.mark.parametrize("kind", ENV_KINDS)
def test_env_family(kind, env_world, tmp_path, lg, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setenv("LOCKGUARD_INTERPRETER_TIMEOUT", "20")  # nothing in-process may wait long
    project, template = env_world
    cases = [c for c in _env_corpus() if c.kind == kind]
    # the hang-prone cases run in subprocesses that mostly wait out a timeout: side by side
    with ThreadPoolExecutor(max_workers=8) as pool:
        waiting = [
            pool.submit(run_env_case, c, project, template, tmp_path, None)
            for c in cases
            if c.process
        ]
        failures = [
            run_env_case(c, project, template, tmp_path, lg) for c in cases if not c.process
        ]
        failures = [f for f in failures + [job.result() for job in waiting] if f]
    assert not failures, (
        f"{len(failures)} of {len(cases)} cases broke the contract:\n  " + "\n  ".join(failures)
    )


@pytest.mark.parametrize(
    "command, expect", [("check", 0), ("dry-run", 0), ("list", 0), ("restore", 2), ("doctor", 0)]
)
def test_the_undamaged_environment_passes(env_world, tmp_path, lg, monkeypatch, command, expect):
    """The control: without damage each command gives its clean answer, so a case's exit code is
    the damage's doing (restore: nothing to restore is exit 2)."""
    from tests.support.fuzz_env import EnvCase

    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    project, template = env_world
    case = EnvCase(
        "control",
        "none",
        command,
        "venv",
        lambda prefix: None,
        frozenset({expect}),
        names="{prefix}",
    )
    failure = run_env_case(case, project, template, tmp_path, lg)
    assert failure is None, failure
