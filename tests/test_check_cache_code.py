"""The check result cache is keyed by lockguard's code, not only its version: an edited module
without a version bump runs the check again instead of replaying what the old code printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import lockguard
from lockguard.io.cache import fingerprints
from lockguard.io.cache.entry import checksum_digest
from lockguard.io.cache.store import Store
from lockguard.io.project import check_cache

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gpu-training"


def _installed_copy(root: Path) -> Path:
    """A copy of the lockguard package laid out as a wheel installs it (constraints/ inside)."""
    package = root / "site" / "lockguard"
    shutil.copytree(
        Path(lockguard.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    # the editable install maps it from the repo
    if not (package / "constraints" / "cuda.toml").exists():
        shutil.copytree(
            REPO / "constraints",
            package / "constraints",
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return package


def _check(site: Path, project: Path, cache: Path) -> subprocess.CompletedProcess:
    script = (
        f"import sys; sys.path.insert(0, {str(site)!r}); from lockguard.start import main; main()"
    )
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(cache)}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", script, "check"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_an_edited_module_is_never_answered_from_the_cache(tmp_path):
    package = _installed_copy(tmp_path)
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    cache = tmp_path / "cache"
    first = _check(package.parent, project, cache)
    assert first.stdout == "ok: lockguard.toml: no findings\n"
    entries = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert _check(package.parent, project, cache).stdout == first.stdout
    # a hit stores nothing
    assert sorted(p.name for p in cache.rglob("*") if p.is_file()) == entries
    render = package / "check" / "render.py"
    # same version
    render.write_text(render.read_text().replace(": no findings", ": nothing found"))
    edited = _check(package.parent, project, cache)
    assert edited.stdout == "ok: lockguard.toml: nothing found\n"  # the new code ran, not the memo


def test_the_fingerprint_follows_each_module(tmp_path, monkeypatch):
    package = tmp_path / "lockguard"
    (package / "check").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "check" / "rules.py").write_text("A = 1\n")
    (package / "check" / "notes.txt").write_text("not code\n")
    monkeypatch.setattr(lockguard, "__file__", str(package / "__init__.py"))
    before = fingerprints.package_fingerprint()
    assert "check/rules.py:" in before and "notes.txt" not in before
    key = check_cache.command_key(["check"])
    (package / "check" / "rules.py").write_text("A = 22\n")
    assert fingerprints.package_fingerprint() != before
    assert check_cache.command_key(["check"]) != key


def _remember(project: Path, argv: list[str], output: str) -> None:
    check_cache.CheckResults(argv).store(
        intent=str(project / "lockguard.toml"),
        default_intent=False,
        root=str(project),
        lock_files=[],
        lock_folder=str(project),
        wait=False,
        json=False,
        output=output,
        code=0,
    )


def test_command_lines_whose_entries_share_a_name_never_answer_for_each_other(
    tmp_path, monkeypatch
):
    """Check results are named by checksums of their key, not a sha256 (the cached path imports
    no hashlib): the entry holds its whole key, and a name two keys share is a miss."""
    every_name_alike = Store("check", 3, str(tmp_path / "cache"), names=lambda *_: bytes(32))
    monkeypatch.setattr(check_cache, "RESULTS", every_name_alike)
    project = tmp_path / "project"
    project.mkdir()
    (project / "lockguard.toml").write_text('python = "3.11"\n')
    monkeypatch.chdir(project)
    _remember(project, ["check"], "ok: plain\n")
    assert check_cache.CheckResults(["check"]).lookup().output == "ok: plain\n"
    assert check_cache.CheckResults(["check", "--strict"]).lookup() is None


def test_a_file_edited_to_the_same_size_and_time_is_read_again(tmp_path, monkeypatch):
    """The entry keeps the bytes it read and compares them: no stat shortcut, no digest."""
    monkeypatch.setattr(check_cache, "RESULTS", Store("check", 3, str(tmp_path / "cache")))
    project = tmp_path / "project"
    project.mkdir()
    intent = project / "lockguard.toml"
    intent.write_text('python = "3.11"\n')
    monkeypatch.chdir(project)
    _remember(project, ["check"], "ok\n")
    remembered = check_cache.CheckResults(["check"]).lookup()
    assert remembered.current()
    stat = intent.stat()
    intent.write_text('python = "3.12"\n')
    os.utime(intent, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not remembered.current()


def test_checksum_names_differ_with_the_key_and_fill_a_digest():
    names = {checksum_digest("check", 3, key) for key in ("a", "b", "ab", "ba", "")}
    assert len(names) == 5
    assert {len(name) for name in names} == {32}
    assert checksum_digest("check", 3, "a") != checksum_digest("check", 4, "a")
