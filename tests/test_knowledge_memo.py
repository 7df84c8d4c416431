"""knowledge/built_memo.py: the checked knowledge kept between runs is the knowledge the files
make, for these very files and this very code; anything else is built again."""

from __future__ import annotations

import shutil

import pytest

from lockguard.errors import InputError
from lockguard.io.project.parse_memo import ParseMemo
from lockguard.knowledge import built_memo
from lockguard.knowledge.loader import default_dir, load_knowledge
from tests.support import cache_entries


def _copy(tmp_path):
    folder = tmp_path / "constraints"
    shutil.copytree(default_dir(), folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder


def _entries(memo: ParseMemo) -> int:
    return len(cache_entries.entries("parsed", memo.root))


@pytest.mark.parametrize("validate", [False, True])
def test_the_knowledge_rebuilt_from_plain_data_is_the_knowledge(validate):
    knowledge = load_knowledge(validate=validate)
    rebuilt = built_memo.decode(built_memo.encode(knowledge), {})
    assert rebuilt == knowledge and repr(rebuilt) == repr(knowledge)
    assert [type(r) for r in rebuilt.releases] == [type(r) for r in knowledge.releases]
    arch = knowledge.archs[0]
    assert rebuilt.arch_row(arch.variant, "2.1.2") == knowledge.arch_row(arch.variant, "2.1.2")


def test_a_second_load_is_the_kept_one_and_the_same(tmp_path, monkeypatch):
    folder = _copy(tmp_path)
    memo = ParseMemo(str(tmp_path / "memo"))
    first = load_knowledge(folder, validate=False, memo=memo)
    kept = _entries(memo)
    calls = []
    monkeypatch.setattr(built_memo, "decode", lambda data, shared: calls.append(1) or first)
    assert load_knowledge(folder, validate=False, memo=ParseMemo(memo.root)) is first  # from the memo
    assert calls == [1] and _entries(memo) == kept


def test_an_edited_file_is_checked_again(tmp_path):
    folder = _copy(tmp_path)
    memo = ParseMemo(str(tmp_path / "memo"))
    before = load_knowledge(folder, validate=False, memo=memo)
    hazards = (folder / "hazards.toml").read_text()
    (folder / "hazards.toml").write_text(hazards.replace('id = "', 'id = "edited-', 1))
    after = load_knowledge(folder, validate=False, memo=ParseMemo(memo.root))
    assert after.hazards[0].id == "edited-" + before.hazards[0].id
    (folder / "hazards.toml").write_text(hazards.replace("[[hazard]]", "[[hazzard]]", 1))
    with pytest.raises(InputError, match=r"hazards.toml:\d+: unknown table \[\[hazzard\]\]"):
        load_knowledge(folder, validate=False, memo=ParseMemo(memo.root))


def test_other_code_or_a_damaged_entry_builds_again(tmp_path, monkeypatch):
    folder = _copy(tmp_path)
    memo = ParseMemo(str(tmp_path / "memo"))
    knowledge = load_knowledge(folder, validate=False, memo=memo)
    monkeypatch.setattr(built_memo, "code_stamp", lambda: "another lockguard")
    calls = []
    real_decode = built_memo.decode
    monkeypatch.setattr(built_memo, "decode", lambda data, shared: calls.append(1) or real_decode(data, shared))
    assert load_knowledge(folder, validate=False, memo=ParseMemo(memo.root)) == knowledge
    assert calls == []  # another code stamp is another entry: built, not decoded
    for entry in cache_entries.entries("parsed", memo.root):  # a valid entry of the right kind that does not rebuild
        cache_entries.rewrite(entry, __import__("marshal").dumps((built_memo.KIND, ("r", "NoSuchClass", ()))))
    assert load_knowledge(folder, validate=False, memo=ParseMemo(memo.root)) == knowledge


def test_a_value_it_does_not_keep_is_never_kept():
    with pytest.raises(built_memo.NotKept):
        built_memo.encode(object())
    from lockguard.model.pep440 import Spec

    with pytest.raises(built_memo.NotKept):
        built_memo.encode(Spec("===1.0"))  # arbitrary equality: packaging decides it


def test_the_loader_names_the_schema_files_in_order():
    from lockguard.knowledge.loader import FILES
    from lockguard.knowledge.schema import SCHEMA

    assert tuple(SCHEMA) == FILES
