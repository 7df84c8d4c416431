"""Cooldowns (issue 31 §4): `exclude-newer = "7 days"` and `exclude-newer-package`, over a local
index whose releases carry PEP 700 upload times relative to now, and that publishes between two
resolves. The lock records the absolute cut-off and the span; `resolve --check` stays green as
days pass; `resolve --upgrade` takes a fresh cut-off; `outdated` says what the cooldown holds
back."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from lockguard.errors import InputError
from lockguard.lockfiles.headers import read_header
from tests.support.releases import months_later, pins, write_intent
from tests.support.wheels import build_wheel

NOW = datetime.now(timezone.utc).replace(microsecond=0)


def _ago(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def index(local_index, tmp_path):
    def publish(name: str, version: str, days_ago: float) -> None:
        wheel = build_wheel(tmp_path / "wheels" / f"{name}-{version}", name, version)
        local_index.add(wheel, upload_time=_ago(days_ago))

    local_index.publish = publish
    publish("cool", "1.0", 30)
    publish("cool", "1.1", 3)  # inside a 7 days cooldown
    publish("other", "1.0", 40)
    publish("other", "2.0", 20)
    return local_index


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def header(project: Path) -> dict[str, str]:
    return read_header((project / "requirements.lock").read_text()).fields


def days_later(monkeypatch, days: float) -> None:
    """The clock a resolve settles a cooldown with, moved on."""
    monkeypatch.setattr("lockguard.app.cooldowns.clock", lambda: NOW + timedelta(days=days))


def test_a_relative_cooldown_leaves_out_recent_uploads_and_records_its_cut_off(tmp_path, index, lg):
    project = tmp_path / "p"
    write_intent(project, index.url, ["cool", "other"], extra='exclude-newer = "7 days"\n')
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert pins(project) == {"cool": "1.0", "other": "2.0"}
    fields = header(project)
    assert fields["exclude-newer-span"] == "P7D"
    recorded = datetime.fromisoformat(fields["exclude-newer"].replace("Z", "+00:00"))
    # the real clock settled it (NOW is the module's import: a busy xdist run starts this later)
    now = datetime.now(timezone.utc)
    assert abs(recorded - (now - timedelta(days=7))) < timedelta(minutes=5)
    # the passed-over note names the cooldown
    assert "1.1 (uploaded after exclude-newer " in result.stderr
    assert "(a 7 days cooldown))" in result.stderr


def test_check_stays_green_as_days_pass_and_upgrade_takes_a_fresh_cut_off(
    tmp_path, index, lg, monkeypatch
):
    project = tmp_path / "p"
    write_intent(project, index.url, ["cool"], extra='exclude-newer = "1 week"\n')
    assert resolve(lg, project).exit_code == 0
    before = (project / "requirements.lock").read_text()
    assert pins(project) == {"cool": "1.0"}
    index.publish("cool", "2.0", 0)  # published between two resolves
    months_later(monkeypatch, tmp_path, "later")  # the pages are read again
    days_later(monkeypatch, 5)  # cool 1.1 is now past the cooldown, 2.0 is not
    check = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"), "--check")
    assert check.exit_code == 0, check.output
    assert "exclude-newer: a 7 days cooldown, cut-off " in check.stderr
    assert "as the lock records it" in check.stderr
    assert resolve(lg, project).exit_code == 0
    assert (project / "requirements.lock").read_text() == before  # the recorded cut-off is kept
    upgraded = resolve(lg, project, "--upgrade")
    assert upgraded.exit_code == 0, upgraded.stderr
    assert pins(project) == {"cool": "1.1"}  # 2.0 is still inside the cooldown
    recorded = datetime.fromisoformat(header(project)["exclude-newer"].replace("Z", "+00:00"))
    assert abs(recorded - (NOW - timedelta(days=2))) < timedelta(minutes=5)
    assert resolve(lg, project, "--check").exit_code == 0


def test_a_changed_span_takes_a_fresh_cut_off(tmp_path, index, lg):
    project = tmp_path / "p"
    write_intent(project, index.url, ["cool"], extra='exclude-newer = "7 days"\n')
    assert resolve(lg, project).exit_code == 0
    write_intent(project, index.url, ["cool"], extra='exclude-newer = "P2D"\n')
    assert resolve(lg, project, "--check").exit_code == 1
    assert resolve(lg, project, "--upgrade").exit_code == 0
    assert pins(project) == {"cool": "1.1"} and header(project)["exclude-newer-span"] == "P2D"


def test_an_exemption_for_a_package_on_both_sides_is_the_pip_package_s(tmp_path):
    """numpy from conda and from pip: the exemption is the pip package's, not refused; one that
    names only the intent's conda side is (the parametrized exit-2 cases below)."""
    from lockguard.io.project.intent_file import load_intent

    path = write_intent(tmp_path / "p", "https://pypi.org/simple", ["numpy"], conda=["numpy"])
    path.write_text(path.read_text() + "exclude-newer-package = { numpy = false }\n")
    assert load_intent(path).package_cutoffs["numpy"].at is None
    only_conda = write_intent(tmp_path / "q", "https://pypi.org/simple", ["x"], conda=["numpy"])
    only_conda.write_text(only_conda.read_text() + "exclude-newer-package = { numpy = false }\n")
    with pytest.raises(InputError, match="'numpy' is a conda package here"):
        load_intent(only_conda)


def test_spellings_of_one_span_are_one_intent(tmp_path):
    from lockguard.io.project.intent_file import load_intent

    hashes = set()
    for i, span in enumerate(["7 days", "1 week", "P7D", "P1W", "168 hours", "7d"]):
        path = write_intent(tmp_path / str(i), "https://pypi.org/simple", ["x"])
        path.write_text(path.read_text() + f'exclude-newer = "{span}"\n')
        intent = load_intent(path)
        assert intent.exclude_newer_span == "P7D"
        hashes.add(intent.hash)
    assert len(hashes) == 1


def test_exemptions_lift_or_set_a_package_s_own_cut_off(tmp_path, index, lg):
    project = tmp_path / "p"
    extra = (
        'exclude-newer = "7 days"\n'
        f'exclude-newer-package = {{ cool = false, other = "{_ago(25)[:10]}" }}\n'
    )
    write_intent(project, index.url, ["cool", "other"], extra=extra)
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    assert pins(project) == {"cool": "1.1", "other": "1.0"}
    assert "exclude-newer-package" not in header(project)  # nothing relative to record
    # a package's own cooldown is recorded, and kept as days pass
    extra = 'exclude-newer-package = { cool = "2 days" }\n'
    write_intent(project, index.url, ["cool"], extra=extra)
    assert resolve(lg, project).exit_code == 0
    assert pins(project) == {"cool": "1.1"}
    record = header(project)["exclude-newer-package"]
    assert record.startswith("cool=") and record.endswith("/P2D")
    assert resolve(lg, project, "--check").exit_code == 0


def test_a_pin_inside_the_cooldown_names_the_cut_off(tmp_path, index, lg):
    project = tmp_path / "p"
    write_intent(project, index.url, ["cool==1.1"], extra='exclude-newer = "7 days"\n')
    result = resolve(lg, project)
    assert result.exit_code == 3, result.output
    assert "cool 1.1 was uploaded on" in result.stderr
    assert "(a 7 days cooldown)" in result.stderr
    assert "exclude-newer-package = { cool = false }" in result.stderr  # the hint


def test_outdated_shows_what_the_cooldown_holds_back(tmp_path, index, lg, monkeypatch):
    project = tmp_path / "p"
    write_intent(project, index.url, ["cool", "other"], extra='exclude-newer = "7 days"\n')
    assert resolve(lg, project).exit_code == 0
    result = lg("outdated", "--intent", str(project / "lockguard.toml"), "--json")
    assert result.exit_code == 0, result.stderr
    rows = {
        r["name"]: r for r in json.loads(result.stdout)["data"]["platforms"]["linux-64"]["outdated"]
    }
    assert set(rows) == {"cool"}
    row = rows["cool"]
    assert (row["locked"], row["allowed"], row["newest"]) == ("1.0", "1.0", "1.1")
    (reason,) = row["held_back_by"]
    assert f"cool 1.1 was uploaded on {_ago(3)[:10]}, after exclude-newer" in reason
    assert "7 days cooldown" in reason
    assert f"its cooldown ends {(NOW + timedelta(days=4)).date().isoformat()}" in reason
    text = lg("outdated", "--intent", str(project / "lockguard.toml"))
    assert "cooldown" in text.stdout


@pytest.mark.parametrize(
    "extra, line, needle",
    [
        ('exclude-newer = "7 fortnights"\n', 6, "'fortnights' is not a unit"),
        ('exclude-newer = "1 month"\n', 6, "calendar units"),
        ('exclude-newer = "P1M"\n', 6, "calendar units"),
        ('exclude-newer = "7 days ago"\n', 6, "without a sign or 'ago'"),
        ("exclude-newer-package = { torch = true }\n", 6, "true is not a cut-off"),
        ('exclude-newer-package = { torch = "soon" }\n', 6, "neither a date-time nor a span"),
        ('exclude-newer-package = "torch"\n', 6, "must be a table"),
        ('[exclude-newer-package]\ntorch = false\nTorch = "2 days"\n', 8, "a second time"),
        ('[exclude-newer-package]\n"bad name!" = false\n', 7, "is not a project name"),
        ("[exclude-newer-package]\ncudnn = false\n", 7, "'cudnn' is a conda package here"),
        ("exclude-newer-package = { python = false }\n", 6, "the conda side has one cut-off"),
    ],
)
def test_bad_cooldowns_are_exit_2_with_file_and_line(tmp_path, lg, extra, line, needle):
    project = tmp_path / "p"
    write_intent(project, "https://pypi.org/simple", ["x"], extra=extra)
    result = resolve(lg, project)
    assert result.exit_code == 2, result.output
    assert f"lockguard.toml:{line}:" in result.stderr, result.stderr
    assert needle in result.stderr, result.stderr
