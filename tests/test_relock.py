"""Relocks keep the lock (issue 21): locked versions are preferences, upgrades are explicit, every
relock says what changed. Against a real local index whose pages change between resolves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.releases import Releases, months_later, pins, write_intent


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    """requests-like: app 1.0 needs lib<2 and certs; lib 1.0 and certs 2023.1 exist on day one."""
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2", "certs"])
    found.publish("lib", "1.0")
    found.publish("certs", "2023.1")
    found.publish("extra-tool", "1.0")
    return found


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def first_lock(lg, releases: Releases, project: Path, pip: list[str], **kw) -> dict[str, str]:
    write_intent(project, releases.index.url, pip, **kw)
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    return pins(project)


def publish_newer(releases: Releases) -> None:
    """What months on an index look like: every package has newer releases."""
    releases.publish("app", "1.1", requires=["lib<3", "certs"])
    releases.publish("lib", "1.1")
    releases.publish("lib", "2.5")
    releases.publish("certs", "2026.10")
    releases.publish("extra-tool", "3.0")
    releases.publish("six", "1.17.0")


def test_adding_a_requirement_keeps_every_locked_pin_and_reports_one_added(
    tmp_path, releases, lg, monkeypatch
):
    project = tmp_path / "p"
    assert first_lock(lg, releases, project, ["app"]) == {
        "app": "1.0",
        "lib": "1.0",
        "certs": "2023.1",
    }
    publish_newer(releases)
    months_later(monkeypatch, tmp_path, "later")
    write_intent(project, releases.index.url, ["app", "six"])
    result = resolve(lg, project, "--json")
    assert result.exit_code == 0, result.stderr
    assert pins(project) == {"app": "1.0", "lib": "1.0", "certs": "2023.1", "six": "1.17.0"}
    assert "linux-64: 1 added" in result.stderr
    assert any(line.split() == ["added", "six", "1.17.0"] for line in result.stderr.splitlines()), (
        result.stderr
    )
    changes = json.loads(result.stdout)["data"]["changes"]["platforms"]["linux-64"]
    assert changes["other"] == [
        {"name": "six", "side": "pip", "change": "added", "old": None, "new": "1.17.0"}
    ]
    assert changes["cuda_stack"] == [] and changes["counts"] == {"added": 1}


def test_removing_a_requirement_keeps_the_others(tmp_path, releases, lg, monkeypatch):
    project = tmp_path / "p"
    first_lock(lg, releases, project, ["app", "extra-tool"])
    publish_newer(releases)
    months_later(monkeypatch, tmp_path, "later")
    write_intent(project, releases.index.url, ["app"])
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert pins(project) == {"app": "1.0", "lib": "1.0", "certs": "2023.1"}
    assert "linux-64: 1 removed" in result.stderr
    assert any(
        line.split() == ["removed", "extra-tool", "1.0"] for line in result.stderr.splitlines()
    )


def test_a_changed_specifier_moves_what_it_forces_and_nothing_else(
    tmp_path, releases, lg, monkeypatch
):
    project = tmp_path / "p"
    first_lock(lg, releases, project, ["app", "extra-tool"])
    publish_newer(releases)
    months_later(monkeypatch, tmp_path, "later")
    write_intent(project, releases.index.url, ["app>=1.1", "extra-tool"])
    result = resolve(lg, project, "--json")
    assert result.exit_code == 0, result.stderr
    # app moves because the intent says so; lib 1.0 still fits app 1.1 (lib<3): kept, like the
    # others
    assert pins(project) == {"app": "1.1", "lib": "1.0", "certs": "2023.1", "extra-tool": "1.0"}
    other = json.loads(result.stdout)["data"]["changes"]["platforms"]["linux-64"]["other"]
    assert other == [
        {"name": "app", "side": "pip", "change": "upgraded", "old": "1.0", "new": "1.1"}
    ]


def test_upgrade_moves_everything_and_a_plain_relock_moves_nothing(
    tmp_path, releases, lg, monkeypatch
):
    project = tmp_path / "p"
    first_lock(lg, releases, project, ["app"])
    publish_newer(releases)
    months_later(monkeypatch, tmp_path, "later")
    plain = resolve(lg, project)
    assert plain.exit_code == 0 and "linux-64: unchanged" in plain.stderr
    assert pins(project) == {"app": "1.0", "lib": "1.0", "certs": "2023.1"}
    everything = resolve(lg, project, "--upgrade")
    assert everything.exit_code == 0, everything.stderr
    assert pins(project) == {"app": "1.1", "lib": "2.5", "certs": "2026.10"}
    assert "linux-64: 3 upgraded" in everything.stderr


def test_upgrade_package_of_an_unknown_name_or_a_bad_spelling_is_exit_2(tmp_path, releases, lg):
    project = tmp_path / "p"
    first_lock(lg, releases, project, ["app"])
    before = (project / "requirements.lock").read_bytes()
    unknown = resolve(lg, project, "--upgrade-package", "nosuchthing")
    assert (
        unknown.exit_code == 2
        and "nosuchthing" in unknown.stderr
        and "not in the lock or the intent" in unknown.stderr
    )
    for bad in ("lib>=2", "lib==", "lib==not a version", "=="):
        result = resolve(lg, project, "--upgrade-package", bad)
        assert result.exit_code == 2, (bad, result.stderr)
        assert "--upgrade-package" in result.stderr and "Traceback" not in result.output
    assert (project / "requirements.lock").read_bytes() == before
