"""`resolve --check` is stable over time (issue 21): it passes when only the index published, fails
when the repository changed in a way that moves a pin; yanked and vanished locked versions are
reported, never replaced silently; a lock that cannot be a preference source says so. Plus what the
resolution memo must know now that the lock is an input, and what a relock fetches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockguard.lockfiles.headers import seal
from tests.support.releases import Releases, months_later, pins, write_intent

MEMO_LINE = "resolution memo:"


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2"])
    found.publish("lib", "1.0")
    found.publish("lib", "1.1")
    return found


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


@pytest.fixture
def project(tmp_path, releases, lg) -> Path:
    project = tmp_path / "p"
    write_intent(project, releases.index.url, ["app"])
    assert resolve(lg, project).exit_code == 0
    assert pins(project) == {"app": "1.0", "lib": "1.1"}
    return project


def test_check_passes_when_only_the_index_gained_releases(
    project, releases, lg, monkeypatch, tmp_path
):
    releases.publish("app", "2.0", requires=["lib"])
    releases.publish("lib", "1.9")
    releases.publish("lib", "3.0")
    months_later(monkeypatch, tmp_path, "later")
    before = (project / "requirements.lock").read_bytes()
    result = resolve(lg, project, "--check", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)["data"]
    assert data["current"] is True and data["stale"] == [] and data["changes"]["unchanged"] is True
    assert "the lock files are current" in result.stderr
    assert (project / "requirements.lock").read_bytes() == before


def test_check_fails_after_an_intent_change_and_says_what_a_resolve_would_change(
    project, releases, lg, monkeypatch, tmp_path
):
    releases.publish("six", "1.17.0")
    months_later(monkeypatch, tmp_path, "later")
    write_intent(project, releases.index.url, ["app", "six"])
    result = resolve(lg, project, "--check", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)["data"]
    assert data["current"] is False and data["stale"] == [str(project / "requirements.lock")]
    assert data["changes"]["platforms"]["linux-64"]["other"] == [
        {"name": "six", "side": "pip", "change": "added", "old": None, "new": "1.17.0"}
    ]
    text = resolve(lg, project, "--check")
    assert text.exit_code == 1 and "a resolve would change:" in text.stderr and "six" in text.stderr


def test_check_fails_after_a_hand_edit_that_moves_a_pin(project, releases, lg):
    lock = project / "requirements.lock"
    # someone "downgraded" it by hand
    lock.write_text(lock.read_text().replace("lib==1.1", "lib==1.0"))
    result = resolve(lg, project, "--check")
    assert result.exit_code == 1 and f"out of date: {lock}" in result.stderr


def test_a_yanked_locked_version_is_kept_with_the_index_reason(
    project, releases, lg, monkeypatch, tmp_path
):
    releases.yank("lib", "1.1", "CVE-2099-0001: do not use")
    months_later(monkeypatch, tmp_path, "later")
    check = resolve(lg, project, "--check")
    assert check.exit_code == 0, check.stderr
    assert (
        "warning: linux-64: lib 1.1 is locked and was yanked from the index "
        "(CVE-2099-0001: do not use)"
    ) in check.stderr
    relock = resolve(lg, project)
    assert (
        relock.exit_code == 0 and pins(project)["lib"] == "1.1" and "CVE-2099-0001" in relock.stderr
    )
    moved = resolve(lg, project, "--upgrade-package", "lib")
    # a yanked release is never chosen afresh
    assert moved.exit_code == 0 and pins(project)["lib"] == "1.0"


def test_a_vanished_locked_version_fails_the_check_naming_it_and_is_never_replaced_silently(
    project, releases, lg, monkeypatch, tmp_path
):
    releases.withdraw("lib", "1.1")
    months_later(monkeypatch, tmp_path, "later")
    before = (project / "requirements.lock").read_bytes()
    check = resolve(lg, project, "--check", "--json")
    assert check.exit_code == 1
    assert json.loads(check.stdout)["data"]["vanished"] == [
        {"name": "lib", "locked": "1.1", "now": "1.0"}
    ]
    assert (
        "out of date: lib 1.1 is locked, but the index no longer has it; "
        "a resolve takes 1.0 instead"
    ) in check.stderr
    assert (project / "requirements.lock").read_bytes() == before
    relock = resolve(lg, project)
    assert relock.exit_code == 0
    assert (
        "warning: linux-64: lib 1.1 is locked, but the index no longer has it; "
        "a resolve takes 1.0 instead"
    ) in relock.stderr
    assert any(
        line.split() == ["downgraded", "lib", "1.1", "->", "1.0"]
        for line in relock.stderr.splitlines()
    )


def test_a_lock_that_does_not_parse_or_is_for_another_platform_is_not_a_preference_source(
    project, releases, lg
):
    # within the page TTL the cache does not see it: the cache is the index here
    releases.publish("lib", "1.5")
    lock = project / "requirements.lock"
    lock.write_text(lock.read_text() + "this is not a lock line\n")
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "not a preference source" in line]
    # a hand edit (the body hash no longer holds): reverted to what lockguard wrote (issue 30)
    assert len(warnings) == 1 and "requirements.lock was edited by hand" in warnings[0]
    assert "no longer parses: line" in warnings[0] and pins(project)["lib"] == "1.1"
    text = (
        lock.read_text()
        .replace("lib==1.1", "lib==1.0")
        .replace("# lockguard-platform: linux-64", "# lockguard-platform: linux-aarch64")
    )
    lock.write_text(
        seal(text.replace(text.split("lockguard-body-hash: sha256:")[1][:64], "0" * 64))
    )
    other = resolve(lg, project)
    assert other.exit_code == 0, other.stderr
    assert "was written for linux-aarch64, not linux-64: not a preference source" in other.stderr
    assert pins(project)["lib"] == "1.1"  # from scratch: the newest, not the foreign lock's 1.0


def test_the_memo_key_holds_the_lock_a_resolve_starts_from(project, releases, lg):
    """A hand edit to an older, still valid version is honoured: a memo keyed without the lock
    would give back the files of the resolve before the edit."""
    # remembered
    assert MEMO_LINE in lg("-v", "resolve", "--intent", str(project / "lockguard.toml")).stderr
    lock = project / "requirements.lock"
    text = lock.read_text().replace("lib==1.1", "lib==1.0")
    lock.write_text(
        seal(text.replace(text.split("lockguard-body-hash: sha256:")[1][:64], "0" * 64))
    )
    hashes = [line for line in lock.read_text().splitlines() if "--hash" in line]
    edited = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"))
    assert edited.exit_code == 0 and MEMO_LINE not in edited.stderr
    assert pins(project)["lib"] == "1.0"
    assert [
        line for line in lock.read_text().splitlines() if "--hash" in line
    ] != hashes  # lib 1.0's own hash now
    again = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"))
    # the lock it wrote is remembered
    assert MEMO_LINE in again.stderr and pins(project)["lib"] == "1.0"


def test_a_relock_after_adding_one_package_fetches_only_that_package(project, releases, lg):
    """Warm metadata, one requirement added, every page asked again (--refresh) and newer releases
    on them: the only files the index is asked for are the new name's (the locked versions'
    metadata is cached, and neither the resolver nor the prefetcher looks at a newer version)."""
    releases.publish("lib", "1.5")
    releases.publish("app", "1.2", requires=["lib"])
    releases.publish("six", "1.17.0")
    releases.index.reset_counters()
    write_intent(project, releases.index.url, ["app", "six"])
    result = resolve(lg, project, "--refresh")
    assert result.exit_code == 0, result.stderr
    files = sorted(
        {path for _method, path, _range in releases.index.requests if path.startswith("/files/")}
    )
    assert files and all("/six-" in path for path in files), files
    assert pins(project) == {"app": "1.0", "lib": "1.1", "six": "1.17.0"}
