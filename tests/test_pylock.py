"""pylock.toml (PEP 751): a fourth view of the resolution, accepted by packaging.pylock, planned by
real uv like requirements.lock, and checked like the other views (LG100, LG101, LG102, LG110)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from lockguard.lockfiles import pylock, pylock_write
from lockguard.lockfiles.requirements_lock import parse as parse_requirements
from lockguard.model.intent_parse import parse_intent
from tests.support.envs import ENV_PYTHON
from tests.support.locked import check_json as check
from tests.support.locked import edit
from tests.support.wheels import build_wheel

PYLOCK = '[outputs]\npylock = "pylock.toml"\n'
UPLOADED = "2024-01-02T03:04:05.678901Z"


@pytest.fixture
def project(world, tmp_path, lg):
    """A pip-only lock with pylock.toml; one package's index entry has an upload time."""
    world.pypi.add(build_wheel(world.wheels, "tomli", "2.0.2"), upload_time=UPLOADED)
    intent = world.intent(
        tmp_path / "project", pip=["torch==2.1.*", "numpy<2", "jinja2", "tomli"], extra=PYLOCK
    )
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    return intent.parent


def test_packaging_accepts_it_and_it_holds_the_same_pins_as_requirements_lock(project):
    from packaging.pylock import Pylock

    text = (project / "pylock.toml").read_text()
    lock = Pylock.from_dict(tomllib.loads(text))  # raises PylockValidationError on any schema fault
    assert str(lock.lock_version) == "1.0" and lock.created_by == "lockguard"
    assert str(lock.requires_python) == "==3.11.*"
    assert [str(m) for m in lock.environments] == [
        'sys_platform == "linux" and platform_machine == "x86_64"'
    ]
    requirements = parse_requirements((project / "requirements.lock").read_text())
    assert {p.name: str(p.version) for p in lock.packages} == {
        n: e.version for n, e in requirements.entries.items()
    }
    for package in lock.packages:  # every file hashed, and those hashes are requirements.lock's
        entry = requirements.entries[package.name]
        assert package.wheels and not package.sdist
        assert {w.hashes["sha256"] for w in package.wheels} <= set(entry.hashes)
        assert package.index.startswith("http://127.0.0.1:")
    tomli = next(p for p in lock.packages if p.name == "tomli")
    assert tomli.wheels[0].upload_time.isoformat() == "2024-01-02T03:04:05.678901+00:00"
    assert (
        tomli.wheels[0].size
        == (project.parent / "pypi" / "files" / tomli.wheels[0].name).stat().st_size
    )
    # only when the index gives it
    assert "upload-time" not in text.split('name = "numpy"')[1].split("[[packages]]")[0]


def test_tool_lockguard_carries_the_cuda_stack_facts_and_the_header(project):
    text = (project / "pylock.toml").read_text()
    facts = tomllib.loads(text)["tool"]["lockguard"]
    intent = parse_intent((project / "lockguard.toml").read_text(), project / "lockguard.toml")
    assert facts["intent-hash"] == f"sha256:{intent.hash}"
    assert (facts["cuda"], facts["torch"], facts["torch-variant"], facts["torch-source"]) == (
        "12.1",
        "2.1.2",
        "cu121",
        "pypi",
    )
    assert facts["driver-floor"] and facts["conda-side"] == "none (pip only)"
    assert f"# lockguard-intent-hash: sha256:{intent.hash}" in text
    from lockguard.lockfiles.headers import is_sealed_intact

    assert is_sealed_intact(text)
    assert pylock.read(text).tool == facts


def test_byte_stable_and_resolve_check_sees_it(project, lg):
    before = (project / "pylock.toml").read_bytes()
    assert lg("resolve", "--intent", str(project / "lockguard.toml"), "--check").exit_code == 0
    (project / "pylock.toml").unlink()
    stale = lg("resolve", "--intent", str(project / "lockguard.toml"), "--check")
    assert stale.exit_code == 1 and "pylock.toml" in stale.output
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    assert (project / "pylock.toml").read_bytes() == before


def test_the_reader_gives_names_versions_hashes_and_urls(project):
    lock = pylock.read((project / "pylock.toml").read_text())
    requirements = parse_requirements((project / "requirements.lock").read_text())
    numpy = lock.packages["numpy"]
    assert numpy.version == "1.26.4" and numpy.hashes == requirements.entries["numpy"].hashes
    assert numpy.urls and numpy.urls[0].endswith(".whl") and numpy.line is not None
    assert (project / "pylock.toml").read_text().splitlines()[numpy.line - 1] == "[[packages]]"
    from lockguard.lockfiles.syntax import LockSyntaxError

    with pytest.raises(LockSyntaxError, match="not valid TOML"):
        pylock.read("not [valid")


def test_uv_plans_the_same_versions_as_requirements_lock(project, tmp_path):
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv is a test dependency (pip install -e '.[test]')"
    venv = tmp_path / "target"
    subprocess.run([ENV_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(
        UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never"
    )
    done = subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--dry-run",
            "--python",
            str(venv / "bin" / "python"),
            "-r",
            str(project / "pylock.toml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    planned = dict(
        line.strip()[2:].split("==", 1)
        for line in done.stderr.splitlines()
        if line.startswith(" + ")
    )
    requirements = parse_requirements((project / "requirements.lock").read_text())
    assert planned == {n: e.version for n, e in requirements.entries.items()}


def test_check_treats_it_like_the_other_views(project, lg):
    assert check(lg, project)[:2] == (0, [])
    edit(project / "pylock.toml", 'version = "1.26.4"', 'version = "2.0.0"')
    code, codes, findings = check(lg, project)
    assert code == 1 and set(codes) == {"LG102", "LG110"}
    edited = findings[codes.index("LG102")]
    assert (
        edited["file"] == "pylock.toml"
        and "numpy: lockguard wrote 1.26.4, the file has 2.0.0" in edited["message"]
    )
    assert (project / "pylock.toml").read_text().splitlines()[edited["line"] - 1] == "[[packages]]"
    edit(project / "pylock.toml", 'version = "2.0.0"', 'version = "1.26.4"')
    assert check(lg, project)[1] == []
    edit(project / "pylock.toml", 'version = "1.26.4"', 'version = "2.0.0"', reseal=True)
    code, codes, findings = check(lg, project)
    assert (
        codes == ["LG110"]
        and "numpy" in findings[0]["message"]
        and findings[0]["file"] == "pylock.toml"
    )


def test_check_reports_a_missing_or_stale_pylock(project, lg):
    edit(project / "lockguard.toml", '"tomli"]', '"tomli", "hjson"]')
    code, codes, findings = check(lg, project)
    assert codes.count("LG101") == 2 and {f["file"] for f in findings} == {
        "requirements.lock",
        "pylock.toml",
    }
    edit(project / "lockguard.toml", '"tomli", "hjson"]', '"tomli"]')
    (project / "pylock.toml").unlink()
    code, codes, findings = check(lg, project)
    assert codes == ["LG100"] and findings[0]["file"] == "pylock.toml"


def test_knowledge_only_conda_side_is_named_in_tool_lockguard(world, tmp_path, lg):
    intent = world.intent(
        tmp_path / "p", pip=["jinja2"], cuda="none", channels=["conda-forge"], extra=PYLOCK
    )
    assert lg("resolve", "--intent", str(intent), "--conda-from-knowledge").exit_code == 0
    facts = tomllib.loads((tmp_path / "p" / "pylock.toml").read_text())["tool"]["lockguard"]
    assert facts["conda-side"] == "knowledge-only (not solved)" and facts["conda-specs"] == [
        "python=3.11",
        "pip",
    ]
    assert facts["cuda"] == "none" and "torch" not in facts


def test_several_platforms_get_one_pylock_each_with_pep751_names(world, tmp_path):
    from lockguard.model.lock_paths import lock_file, lock_paths

    text = (
        'python = "3.11"\ncuda = "none"\nplatforms = ["linux-64", "linux-aarch64"]\n'
        '[outputs]\npylock = "{}"\n'
    )
    intent = parse_intent(text.format("pylock.toml"), tmp_path / "lockguard.toml")
    assert lock_file(intent, "pylock", "linux-64") == "pylock.linux-64.toml"
    assert ("pylock.linux-aarch64.toml", "pylock", "linux-aarch64") in lock_paths(intent)
    named = parse_intent(text.format("locks/pylock.gpu.toml"), tmp_path / "lockguard.toml")
    assert lock_file(named, "pylock", "linux-64") == "locks/pylock.gpu-linux-64.toml"


def test_the_pylock_key_is_validated_and_leaves_other_intent_hashes_alone(tmp_path):
    from lockguard.errors import InputError

    base = 'python = "3.11"\ncuda = "12.1"\n'
    plain = parse_intent(base, tmp_path / "lockguard.toml")
    defaults = parse_intent(
        base + '[outputs]\nrequirements = "requirements.lock"\n', tmp_path / "lockguard.toml"
    )
    with_pylock = parse_intent(base + PYLOCK, tmp_path / "lockguard.toml")
    assert plain.hash == defaults.hash != with_pylock.hash
    assert "pylock" not in plain.canonical()["outputs"]
    with pytest.raises(InputError) as bad:
        parse_intent(base + '[outputs]\npylock = "lock.toml"\n', tmp_path / "lockguard.toml")
    assert bad.value.line == 4 and "pylock.toml or pylock.<name>.toml" in bad.value.hint


def test_a_file_without_hashes_is_refused_not_written(world, tmp_path):
    from lockguard.errors import InputError
    from lockguard.model.cuda_stack import CudaStack
    from lockguard.model.dist import DistFile
    from lockguard.model.lock import PlatformLock
    from lockguard.model.pip_lock import Pin, PipResolution
    from lockguard.model.target import targets_for

    intent = parse_intent('python = "3.11"\ncuda = "none"\n', tmp_path / "lockguard.toml")
    target = targets_for(intent)[0]
    pin = Pin(
        "plain",
        "1.0",
        "https://example.invalid/simple",
        (
            DistFile(
                "plain-1.0-py3-none-any.whl", "https://example.invalid/plain-1.0-py3-none-any.whl"
            ),
        ),
        (),
    )
    stack = CudaStack("linux-64", None, (), None, None, None)
    platform = PlatformLock(target, stack, PipResolution("linux-64", (pin,)))
    with pytest.raises(InputError) as refused:
        pylock_write.render(
            platform, intent_hash="0" * 64, intent_name="lockguard.toml", python="3.11"
        )
    assert (
        "no hash for plain-1.0-py3-none-any.whl" in refused.value.message
        and "PEP 751" in refused.value.message
    )


def test_the_cached_check_sees_a_pylock_edit(project, lg, monkeypatch):
    monkeypatch.chdir(project)
    assert lg("check").exit_code == 0
    assert lg("check").exit_code == 0  # answered from the cache
    edit(project / "pylock.toml", 'version = "1.26.4"', 'version = "2.0.0"')
    stale = lg("check")
    assert stale.exit_code == 1 and "LG102" in stale.stdout and "pylock.toml" in stale.stdout
