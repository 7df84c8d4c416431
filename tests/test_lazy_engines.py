"""The few imports lockguard keeps inside functions are engines only some runs need; the runs that
do not need them must not import them. packaging's requirement parser (it brings markers and tags,
about 15 ms) is imported only where requirements are validated or resolved, never by the plain
check (validate=False); tomlkit only where a file is written (lockfiles/pylock_write.py, not the
pylock.toml reader). The check is run the way tests/test_check_imports.py runs it."""

from __future__ import annotations

from tests.test_check_imports import _imported, _modules_of_a_check

WRITING_AND_VALIDATING = (
    "packaging.requirements",
    "packaging.markers",
    "tomlkit",
    "lockguard.lockfiles.pylock_write",
)


def test_the_uncached_check_imports_neither_the_requirement_parser_nor_the_toml_writer(tmp_path):
    # --strict: the full rules (a plain check of the example's lock set, which proves itself,
    # reads no knowledge: tests/test_check_imports.py)
    modules, said = _modules_of_a_check(tmp_path, "check", "--no-cache", "--strict", code=1)
    assert "LG140" in said
    # it read both
    assert "lockguard.model.intent_parse" in modules and "lockguard.knowledge.schema" in modules
    assert not _imported(modules, WRITING_AND_VALIDATING)
