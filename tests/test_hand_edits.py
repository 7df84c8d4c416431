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
from tests.support.releases import Releases, pins, write_intent

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
