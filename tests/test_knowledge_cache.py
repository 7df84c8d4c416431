"""The parse of constraints/*.toml kept in the cache layer (io/knowledge/cache.py): used when the
files are the same, a changed file parsed again, an unusable entry a miss, the same knowledge
either way."""

from __future__ import annotations

import marshal
import shutil
from pathlib import Path

import pytest

from lockguard.io.knowledge import files as knowledge_files
from lockguard.io.knowledge.cache import PARSES, KnowledgeParses
from lockguard.io.knowledge.files import default_dir, load_knowledge
from lockguard.knowledge.loader import FILES, parse_file


@pytest.fixture
def constraints_copy(tmp_path) -> Path:
    target = tmp_path / "constraints"
    shutil.copytree(default_dir(), target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


@pytest.fixture(autouse=True)
def _fresh_run():
    """Each load a new run: the knowledge kept in memory for a run (lru_cache) forgotten."""
    knowledge_files._load.cache_clear()
    yield
    knowledge_files._load.cache_clear()


def _texts(folder: Path) -> dict[str, str]:
    return {name: (folder / name).read_text() for name in FILES}


def _entry_path(folder: Path) -> Path:
    return Path(PARSES.path_of(KnowledgeParses(_texts(folder)).key))


def test_the_parse_is_kept_and_stands_in_for_the_toml(constraints_copy):
    load_knowledge(constraints_copy)
    assert _entry_path(constraints_copy).is_file()
    # the kept parse is what the next run reads: a parse of other text under this key shows
    texts = _texts(constraints_copy)
    parses = {name: parse_file(text) for name, text in texts.items()}
    data, _lines = parses["hazards.toml"]
    data["hazard"][0]["why"] = "read from the kept parse"
    PARSES.put(KnowledgeParses(texts).key, marshal.dumps(parses))
    knowledge_files._load.cache_clear()
    assert load_knowledge(constraints_copy).hazards[0].why == "read from the kept parse"


def test_a_changed_constraints_file_is_parsed_again(constraints_copy):
    before = load_knowledge(constraints_copy).hazards[0].why
    path = constraints_copy / "hazards.toml"
    path.write_text(path.read_text().replace(before, "a reason edited since the last run", 1))
    knowledge_files._load.cache_clear()
    assert load_knowledge(constraints_copy).hazards[0].why == "a reason edited since the last run"


@pytest.mark.parametrize(
    "damage", ["garbled", "truncated", "another shape", "a file of another kind"]
)
def test_an_unusable_entry_is_a_miss_and_the_toml_is_parsed(constraints_copy, damage, capsys):
    fresh = load_knowledge(constraints_copy)
    entry = _entry_path(constraints_copy)
    data = entry.read_bytes()
    key = KnowledgeParses(_texts(constraints_copy)).key
    kept = marshal.loads(PARSES.get(key))
    if damage == "garbled":
        entry.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
    elif damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "another shape":  # a valid entry of the layer whose payload is not parses
        PARSES.put(
            KnowledgeParses(_texts(constraints_copy)).key,
            marshal.dumps({"torch.toml": ["not", "a parse"]}),
        )
    else:
        entry.unlink()
        entry.mkdir()
    knowledge_files._load.cache_clear()
    assert load_knowledge(constraints_copy) == fresh
    # parsed again and kept again (marshal's bytes depend on reference counts: compare what they
    # hold)
    assert entry.is_file() and marshal.loads(PARSES.get(key)) == kept
    # a damaged entry is a miss, not news (the cache layer's rule)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("validate", [False, True])
def test_the_same_knowledge_with_and_without_the_entry(constraints_copy, validate):
    parsed = load_knowledge(constraints_copy, validate=validate)
    knowledge_files._load.cache_clear()
    # this run reads the entry
    assert set(KnowledgeParses(_texts(constraints_copy)).kept) == set(FILES)
    assert load_knowledge(constraints_copy, validate=validate) == parsed


def test_a_parse_marshal_cannot_hold_is_not_kept(constraints_copy):
    parses = KnowledgeParses({"dates.toml": "when = 2026-01-01T00:00:00Z\n"})
    assert parses.parse("dates.toml", "when = 2026-01-01T00:00:00Z\n")[0]["when"].year == 2026
    parses.save()
    assert not Path(PARSES.path_of(parses.key)).exists()


def test_a_check_answers_the_same_with_the_kept_parse(lg_process, tmp_path):
    example = Path(__file__).parent.parent / "examples" / "gpu-training"
    env = {"LOCKGUARD_CACHE_DIR": str(tmp_path / "cache")}
    # --strict: the full rules, which read the knowledge (the example's lock set proves itself)
    first = lg_process("check", "--no-cache", "--strict", cwd=example, env=env)
    assert list((tmp_path / "cache" / "entries" / PARSES.kind).rglob("*"))  # the parse was kept
    second = lg_process("check", "--no-cache", "--strict", cwd=example, env=env)
    assert (second.exit_code, second.stdout, second.stderr) == (
        first.exit_code,
        first.stdout,
        first.stderr,
    )
    assert first.exit_code == 1 and "LG140" in first.stdout  # its conda side: from knowledge
