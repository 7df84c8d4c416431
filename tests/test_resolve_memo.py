"""The resolution memo (io/index/resolve_memo.py): a resolve whose inputs are all unchanged renders
the lock files of the last one without resolving; any changed input, an expired or changed index
page, a damaged entry, a resolve that warned or read a missing page, is resolved for real.
Against the local indexes of tests/support/world.py (no network)."""

from __future__ import annotations

import json
import marshal
import shutil
from pathlib import Path

import pytest

import lockguard
from lockguard.io.index import resolve_memo
from lockguard.lockfiles import requirements_lock
from tests.support import cache_entries
from tests.support.wheels import build_wheel

MEMO_LINE = "resolution memo:"


def resolve(lg, project: Path, *args: str):
    return lg("-v", "resolve", "--intent", str(project / "lockguard.toml"), *args)


def pins(project: Path) -> dict[str, str]:
    text = (project / "requirements.lock").read_text()
    return {name: e.version for name, e in requirements_lock.parse(text).entries.items()}


def memo_entries() -> list[Path]:
    return cache_entries.entries("resolution")


def test_an_unchanged_resolve_is_answered_by_the_memo_with_the_same_files_and_messages(
    tmp_path, world, lg, monkeypatch
):
    project = tmp_path / "p"
    world.intent(project, pip=["torch==2.1.*"])
    # not verbose: what a user sees
    first = lg("resolve", "--intent", str(project / "lockguard.toml"), "--json")
    assert first.exit_code == 0, first.stderr
    # one entry under the lock it started from (none), one under the lock it wrote (issue 21)
    assert MEMO_LINE not in first.stderr and len(memo_entries()) == 2
    lock = (project / "requirements.lock").read_bytes()
    (project / "requirements.lock").unlink()  # the memo's text is written again, byte for byte

    import lockguard.resolve.orchestrate as orchestrate

    monkeypatch.setattr(orchestrate, "resolve_lock", lambda *a, **k: pytest.fail("resolved again"))
    world.pypi.reset_counters()
    again = resolve(lg, project, "--json")
    assert again.exit_code == 0, again.stderr
    assert MEMO_LINE in again.stderr and "unchanged and fresh" in again.stderr
    assert (project / "requirements.lock").read_bytes() == lock
    assert world.pypi.requests == []
    replayed = [line for line in again.stderr.splitlines() if not line.startswith(MEMO_LINE)]
    # "linux-64: N pip packages, torch ...", "wrote ..."
    assert replayed == first.stderr.splitlines()
    assert any("pip packages" in line for line in replayed)
    data, data_again = json.loads(first.stdout)["data"], json.loads(again.stdout)["data"]
    assert data_again == data  # the summary too (both wrote requirements.lock)
    check = resolve(lg, project, "--check")
    assert check.exit_code == 0 and "the lock files are current" in check.stderr


def test_an_expired_page_that_changed_is_fetched_and_resolved_again(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    assert pins(project)["jinja2"] == "1.0"
    world.pypi.add(build_wheel(tmp_path / "new", "jinja2", "3.1.4", requires=["markupsafe>=2.0"]))
    within_ttl = resolve(lg, project)  # the page is served from the cache within its TTL, as before
    assert MEMO_LINE in within_ttl.stderr and pins(project)["jinja2"] == "1.0"
    for state in cache_entries.entries("page-state"):  # ten minutes later: every page has expired
        url, content_type, etag, modified, fetched_at, sha = marshal.loads(
            cache_entries.payload(state)
        )
        cache_entries.rewrite(
            state, marshal.dumps((url, content_type, etag, modified, fetched_at - 3600, sha))
        )
    later = resolve(lg, project)
    assert later.exit_code == 0, later.stderr
    assert MEMO_LINE not in later.stderr  # resolved again, with the page that changed ...
    # ... where the locked version is still preferred (issue 21)
    assert pins(project)["jinja2"] == "1.0"
    upgraded = resolve(lg, project, "--upgrade-package", "jinja2")
    assert MEMO_LINE not in upgraded.stderr and pins(project)["jinja2"] == "3.1.4"
    # the new one is kept
    assert MEMO_LINE in resolve(lg, project).stderr and pins(project)["jinja2"] == "3.1.4"


def test_refresh_bypasses_the_memo_and_leaves_the_new_answer_in_it(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    world.pypi.add(build_wheel(tmp_path / "new", "jinja2", "3.1.4", requires=["markupsafe>=2.0"]))
    refreshed = resolve(lg, project, "--refresh", "--upgrade")
    assert MEMO_LINE not in refreshed.stderr and pins(project)["jinja2"] == "3.1.4"
    again = resolve(lg, project)
    assert MEMO_LINE in again.stderr and pins(project)["jinja2"] == "3.1.4"  # never the older entry


def test_a_changed_intent_or_knowledge_is_resolved_again(tmp_path, world, lg, monkeypatch):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    world.intent(project, cuda="none", pip=["jinja2", "hjson"])
    changed = resolve(lg, project)
    assert MEMO_LINE not in changed.stderr and "hjson" in pins(project)
    assert MEMO_LINE in resolve(lg, project).stderr

    import lockguard.constraints as shipped

    knowledge = tmp_path / "constraints"
    shutil.copytree(Path(shipped.__file__).parent, knowledge)
    monkeypatch.setenv("LOCKGUARD_CONSTRAINTS", str(knowledge))
    other_folder = resolve(lg, project)
    assert other_folder.exit_code == 0 and MEMO_LINE not in other_folder.stderr
    assert MEMO_LINE in resolve(lg, project).stderr
    table = sorted(knowledge.glob("*.toml"))[0]
    table.write_text(table.read_text() + "\n# a note\n")
    edited = resolve(lg, project)
    assert edited.exit_code == 0 and MEMO_LINE not in edited.stderr


def test_an_edit_of_lockguard_or_a_deciding_library_changes_the_key(tmp_path, monkeypatch):
    package = tmp_path / "lockguard"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text("A = 1\n")
    monkeypatch.setattr(lockguard, "__file__", str(package / "__init__.py"))
    before = resolve_memo.code_fingerprint()
    assert "rules.py" in before
    (package / "rules.py").write_text("A = 2\n")
    assert resolve_memo.code_fingerprint() != before
    monkeypatch.setattr(
        resolve_memo, "DECIDING_LIBRARIES", ("resolvelib", "packaging", "no_such_library_here")
    )
    assert "no_such_library_here:absent" in resolve_memo.code_fingerprint()


def test_a_damaged_or_foreign_memo_entry_is_a_miss_never_an_answer(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    lock = (project / "requirements.lock").read_bytes()
    entries = memo_entries()  # under the lock it started from, and the one it wrote
    good = json.loads(cache_entries.payload(entries[0]))
    damaged = [
        b"",
        b"{",
        b"[]",
        json.dumps({**good, "format": 99}).encode(),
        # not a file the intent has
        json.dumps({**good, "outputs": {"../elsewhere.txt": "x"}}).encode(),
        json.dumps({**good, "messages": [["shout", "x"]]}).encode(),
        json.dumps({**good, "pages": {}}).encode(),
    ]
    for data in damaged:
        for entry in entries:
            cache_entries.rewrite(entry, data)  # a valid entry of the layer, holding a damaged memo
        result = resolve(lg, project)
        assert result.exit_code == 0, result.stderr
        assert MEMO_LINE not in result.stderr, data
        assert (project / "requirements.lock").read_bytes() == lock
        assert not (tmp_path / "elsewhere.txt").exists()
    assert MEMO_LINE in resolve(lg, project).stderr  # the miss wrote a good entry again


def test_a_changed_page_body_is_a_miss_even_within_its_ttl(tmp_path, world, lg):
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["jinja2"])
    assert resolve(lg, project).exit_code == 0
    for entry in memo_entries():
        remembered = json.loads(cache_entries.payload(entry))
        url = next(u for u in remembered["pages"] if u.endswith("/jinja2/"))
        cache_entries.rewrite(
            entry,
            json.dumps({**remembered, "pages": {**remembered["pages"], url: "0" * 64}}).encode(),
        )
    result = resolve(lg, project)
    assert result.exit_code == 0 and MEMO_LINE not in result.stderr


def test_a_name_missing_from_the_first_index_is_never_memoized(tmp_path, world, local_index, lg):
    """A 404 is not cached by the page client, so a memo of it would outlive what it knew."""
    local_index.add(build_wheel(tmp_path / "w", "only-second", "1.0"))
    project = tmp_path / "p"
    world.intent(project, cuda="none", pip=["only-second"])
    toml = project / "lockguard.toml"
    toml.write_text(
        toml.read_text().replace(
            f'indexes = ["{world.pypi.url}"]',
            f'indexes = ["{world.pypi.url}", "{local_index.url}"]',
        )
    )
    assert resolve(lg, project).exit_code == 0
    assert memo_entries() == []
    assert MEMO_LINE not in resolve(lg, project).stderr


def test_a_remembered_resolve_names_the_files_in_the_order_a_fresh_one_does(tmp_path, world, lg):
    project = tmp_path / "p"
    # requirements.lock, then pylock.toml: not the order of their names
    world.intent(project, pip=["jinja2"], extra='[outputs]\npylock = "pylock.toml"\n')
    resolve(lg, project)
    fresh = resolve(lg, project, "--refresh")  # resolved again: every file "unchanged"
    remembered = resolve(lg, project)
    assert MEMO_LINE in remembered.stderr and MEMO_LINE not in fresh.stderr

    def files(result) -> list[str]:
        return [line for line in result.stderr.splitlines() if line.startswith("unchanged: ")]

    assert len(files(fresh)) >= 2 and files(remembered) == files(fresh)
