"""Drift enforcement is not talked out of an edit (issue 30, items 8 and 9): a lock file edited by
hand is not a preference source, so `lockguard resolve` (the documented fix for LG102) puts back
the pins lockguard wrote and reports the edit, or adopts it only with --accept-edits; and in
knowledge mode an intent edit alone is LG101, never a false LG112. Real child lockguard processes
against a real index on 127.0.0.1, a knowledge-only conda side and all four views of the lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.locked import edit
from tests.support.releases import Releases, months_later, pins, write_intent

VIEWS = ("requirements.lock", "environment.yml", "pylock.toml", "conda-lock.yml")
KNOWLEDGE = 'conda-from-knowledge = true\n[outputs]\npylock = "pylock.toml"\n'
# lib 1.0 -> 0.9 in each view, as a person would type it
EDITS = {
    "requirements.lock": ("lib==1.0 ", "lib==0.9 "),
    "environment.yml": ("    - lib==1.0", "    - lib==0.9"),
    "pylock.toml": ('name = "lib"\nversion = "1.0"', 'name = "lib"\nversion = "0.9"'),
    "conda-lock.yml": ("- name: lib\n  version: '1.0'", "- name: lib\n  version: '0.9'"),
}


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2"])
    found.publish("lib", "0.9")
    found.publish("lib", "1.0")
    found.publish("six", "1.17.0")
    return found


@pytest.fixture
def project(tmp_path, releases, lg_process) -> Path:
    """app 1.0 and lib 1.0 locked in four views, the conda side pinned from knowledge; then lib
    1.1 is published (a resolve that does not prefer the lock would take it)."""
    project = tmp_path / "p"
    write_intent(project, releases.index.url, ["app"], channels=["conda-forge"], extra=KNOWLEDGE)
    first = resolve(lg_process, project)
    assert first.exit_code == 0, first.stderr
    assert pins(project) == {"app": "1.0", "lib": "1.0"}
    releases.publish("lib", "1.1")
    return project


def resolve(lg_process, project: Path, *args: str):
    return lg_process("resolve", "--intent", str(project / "lockguard.toml"), *args)


def check(lg_process, project: Path) -> tuple[int, list[dict]]:
    result = lg_process(
        "check", "--intent", str(project / "lockguard.toml"), "--format", "json", "--no-cache"
    )
    return result.exit_code, json.loads(result.stdout)["data"]["findings"]


def snapshot(project: Path) -> dict[str, bytes]:
    return {name: (project / name).read_bytes() for name in VIEWS}


def hand_edit(project: Path, *names: str) -> None:
    for name in names:
        edit(project / name, *EDITS[name])


def views_of_lib(project: Path) -> dict[str, str]:
    """lib's version in every view, as lockguard reads them."""
    from lockguard.check.lock_views import views_of

    kinds = {
        "requirements.lock": "requirements",
        "environment.yml": "environment",
        "pylock.toml": "pylock",
        "conda-lock.yml": "conda-lock",
    }
    return {
        name: views_of(kinds[name], (project / name).read_text(), "linux-64")["linux-64"].pip["lib"]
        for name in VIEWS
    }


def test_a_hand_edit_is_reverted_by_resolve_and_reported(project, lg_process):
    """The issue's scenario: edit a pin, check says LG102 and names the fix; the fix puts back
    lockguard's pins, says so as a change, and leaves the very bytes lockguard wrote."""
    before = snapshot(project)
    hand_edit(project, "requirements.lock")
    code, findings = check(lg_process, project)
    edited = [f for f in findings if f["code"] == "LG102"]
    assert code == 1 and len(edited) == 1 and "lib" in edited[0]["message"]
    assert "puts back the pins lockguard wrote" in edited[0]["hint"]
    assert "--accept-edits" in edited[0]["hint"]
    result = resolve(lg_process, project, "--json")
    assert result.exit_code == 0, result.stderr
    assert (
        "requirements.lock was edited by hand: lib 0.9 -> 1.0 (reverted to the lock's own pins)"
        in result.stderr
    )
    assert "linux-64: unchanged" not in result.stderr
    assert "linux-64: no package moved; requirements.lock rewritten" in result.stderr
    changes = json.loads(result.stdout)["data"]["changes"]
    assert changes["unchanged"] is False
    assert changes["edits"][0]["pins"] == [
        {
            "name": "lib",
            "side": "pip",
            "platform": "linux-64",
            "wrote": "1.0",
            "edited": "0.9",
            "now": "1.0",
        }
    ]
    assert check(lg_process, project) == (0, [])
    assert snapshot(project) == before


def test_an_edit_of_one_view_on_another_machine_is_reverted_from_the_unedited_views(
    project, lg_process, monkeypatch, tmp_path
):
    """No copy of what lockguard wrote (a CI runner, a colleague's clone): the views that were
    not edited hold the same pins, checked against the edited file's recorded pins digest."""
    before = snapshot(project)
    months_later(monkeypatch, tmp_path, "ci")  # another machine: another cache, lib 1.1 seen
    hand_edit(project, "requirements.lock")
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    assert "as pylock.toml holds them" in result.stderr
    assert "lib 0.9 -> 1.0 (reverted to the lock's own pins)" in result.stderr
    assert snapshot(project) == before  # lib 1.0, not 0.9 (the edit), not 1.1 (the newest)
    assert check(lg_process, project) == (0, [])


def test_an_edit_of_a_view_that_is_no_preference_source_is_reverted_and_reported(
    project, lg_process
):
    before = snapshot(project)
    hand_edit(project, "environment.yml")
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    assert (
        "environment.yml was edited by hand: lib 0.9 -> 1.0 (reverted to the lock's own pins)"
        in result.stderr
    )
    assert "linux-64: no package moved; environment.yml rewritten" in result.stderr
    assert snapshot(project) == before


def test_an_edit_outside_the_pins_is_reverted_and_reported(project, lg_process):
    """A byte changed is a change: a comment typed into the lock is put back and said so."""
    before = snapshot(project)
    lock = project / "requirements.lock"
    lock.write_text(lock.read_text() + "# pinned by hand, do not touch\n")
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    assert (
        "requirements.lock was edited by hand outside its pins: rewritten as lockguard writes it"
    ) in result.stderr
    assert "linux-64: unchanged" not in result.stderr
    assert snapshot(project) == before


def test_an_edit_of_every_view_is_reverted_from_lockguards_own_copy(project, lg_process):
    before = snapshot(project)
    hand_edit(project, *VIEWS)
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    for name in VIEWS:
        assert f"{name} was edited by hand: lib 0.9 -> 1.0 (reverted" in result.stderr
    assert snapshot(project) == before


def test_an_edit_of_every_view_without_lockguards_copy_resolves_afresh_and_says_so(
    project, lg_process, monkeypatch, tmp_path
):
    """Nothing holds the pins lockguard wrote: the edited files are no preferences either (a
    resolve from scratch takes the newest lib), and resolve says so."""
    months_later(monkeypatch, tmp_path, "clone")
    hand_edit(project, *VIEWS)
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    assert (
        "no unedited view holds the pins lockguard wrote: the pip side is resolved without "
        "preferences from the edited files"
    ) in result.stderr
    assert views_of_lib(project) == dict.fromkeys(VIEWS, "1.1")
    assert check(lg_process, project) == (0, [])


@pytest.mark.parametrize(
    ("version", "change"),
    [("1.1", "upgraded"), ("0.9", "downgraded")],
    ids=["to a newer release", "to an older one"],
)
def test_accept_edits_adopts_the_edit_and_reports_it(project, lg_process, version, change):
    """Adopted means demanded: the edited version, whether or not a resolve from scratch (the
    newest, 1.1) would have taken it; every view follows, sealed."""
    hand_edit(project, "requirements.lock")
    text = (project / "requirements.lock").read_text().replace("lib==0.9 ", f"lib=={version} ")
    (project / "requirements.lock").write_text(text)
    result = resolve(lg_process, project, "--accept-edits", "--refresh", "--json")
    assert result.exit_code == 0, result.stderr
    assert "its edits are adopted (--accept-edits)" in result.stderr
    assert (
        f"requirements.lock was edited by hand: lib 1.0 -> {version} (adopted: --accept-edits)"
        in result.stderr
    )
    assert f"linux-64: 1 {change}" in result.stderr
    other = json.loads(result.stdout)["data"]["changes"]["platforms"]["linux-64"]["other"]
    assert other == [{"name": "lib", "side": "pip", "change": change, "old": "1.0", "new": version}]
    assert views_of_lib(project) == dict.fromkeys(VIEWS, version)
    assert check(lg_process, project) == (0, [])


def test_accept_edits_of_an_edit_no_resolution_can_meet_is_exit_3_explained(
    project, releases, lg_process
):
    releases.publish("lib", "2.0")
    hand_edit(project, "requirements.lock")
    text = (project / "requirements.lock").read_text().replace("lib==0.9 ", "lib==2.0 ")
    (project / "requirements.lock").write_text(text)
    edited = snapshot(project)
    result = resolve(lg_process, project, "--accept-edits", "--refresh")
    assert result.exit_code == 3, result.stderr
    assert "the hand edit lib==2.0 in requirements.lock (--accept-edits)" in result.stderr
    assert "app 1.0" in result.stderr and "lib<2" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(project) == edited  # nothing written
    # an older app needs no lib at all: the demand (a constraint) is met by dropping lib, which
    # is not adopting the edit
    releases.publish("app", "0.5")
    dropped = resolve(lg_process, project, "--accept-edits", "--refresh")
    assert dropped.exit_code == 3, dropped.stderr
    assert (
        "linux-64: the hand edit lib==2.0 in requirements.lock (--accept-edits) cannot be "
        "adopted: no resolution keeps lib at that version (the one found drops it)"
    ) in dropped.stderr
    assert snapshot(project) == edited


# -- item 9: knowledge mode, an intent edit alone is LG101 ------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        ('pip = ["app"]', 'pip = ["app", "six"]'),
        ('pip = ["app"]', 'pip = ["app"]\nexclude-newer = "2024-03-01T00:00:00Z"'),
    ],
    ids=["a pip requirement added", "exclude-newer moved"],
)
def test_an_intent_edit_in_knowledge_mode_is_only_lg101(project, lg_process, change):
    edit(project / "lockguard.toml", *change)
    code, findings = check(lg_process, project)
    assert code == 1
    assert sorted({f["code"] for f in findings}) == ["LG101"]
    assert sorted(f["file"] for f in findings) == sorted(VIEWS)


@pytest.mark.parametrize("with_intent_edit", [False, True])
def test_a_real_change_of_the_knowledge_only_conda_specs_is_still_lg112(
    project, lg_process, with_intent_edit
):
    edit(project / "environment.yml", "  - python=3.11", "  - python=3.12", reseal=True)
    if with_intent_edit:
        edit(project / "lockguard.toml", 'pip = ["app"]', 'pip = ["app", "six"]')
    code, findings = check(lg_process, project)
    contradicts = [f for f in findings if f["code"] == "LG112"]
    assert code == 1 and len(contradicts) == 1
    assert contradicts[0]["file"] == "environment.yml"
    assert "its conda specs are not the ones resolve pinned" in contradicts[0]["message"]
    assert ("LG101" in {f["code"] for f in findings}) is with_intent_edit


# -- a solved conda side: conda-lock.yml's records ------------------------------------------------


@pytest.fixture
def channel(tmp_path) -> Path:
    from tests.support.conda_channel import Pkg, build_channel, cuda_forge_packages

    zlibs = [Pkg("zlib", version, "h0") for version in ("1.2.13", "1.3.1")]
    return build_channel(tmp_path / "conda", cuda_forge_packages() + zlibs)


def test_an_edited_conda_record_is_reverted_from_environment_yml_on_another_machine(
    tmp_path, channel, releases, lg_process, monkeypatch
):
    """conda-lock.yml gives the conda side's preferences; edited (and no copy of what lockguard
    wrote on this machine), its records come from the solved environment.yml written with it,
    checked against conda-lock.yml's recorded pins digest."""
    project = tmp_path / "p"
    channels = [channel.as_uri()]
    write_intent(project, releases.index.url, ["app"], channels=channels, conda=["zlib<1.3"])
    assert resolve(lg_process, project).exit_code == 0
    # the cap goes: the lock keeps zlib 1.2.13, although a solve from scratch takes 1.3.1
    write_intent(project, releases.index.url, ["app"], channels=channels, conda=["zlib"])
    assert resolve(lg_process, project).exit_code == 0
    before = {name: (project / name).read_bytes() for name in VIEWS[:2] + VIEWS[3:]}
    assert "- zlib=1.2.13=h0" in (project / "environment.yml").read_text()
    edit(
        project / "conda-lock.yml",
        "- name: zlib\n  version: 1.2.13",
        "- name: zlib\n  version: 1.3.1",
    )
    months_later(monkeypatch, tmp_path, "ci")
    result = resolve(lg_process, project)
    assert result.exit_code == 0, result.stderr
    assert "as environment.yml holds them" in result.stderr
    assert (
        "conda-lock.yml was edited by hand: zlib (conda) 1.3.1=h0 -> 1.2.13=h0 (reverted to the "
        "lock's own pins)"
    ) in result.stderr
    assert {name: (project / name).read_bytes() for name in before} == before
