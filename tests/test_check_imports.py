"""The pre-commit path's import budget (issue 15): `lockguard check` keeps to a small set of
modules, and the replacements that make that possible (model/digest.py for hashlib, the parse
memo for tomllib) behave like what they replace.
No timings here: bench/check.sh measures; these tests pin what is imported and what is answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gpu-training"
# modules the uncached check must not import: each costs a large part of Python's start-up (it is a
# click command like every other: click and what click imports, typing, inspect, collections.abc
# and datetime, are on its path; a repeated check is answered before click is imported)
NOT_ON_THE_CHECK_PATH = ["yaml", "tomllib", "tomli", "traceback", "importlib.resources",
                         "hashlib", "rich", "httpx", "resolvelib", "rattler", "json", "packaging",
                         "pathlib", "urllib.parse", "ipaddress",
                         # lockguard's own, for what a plain check of this example never meets: a
                         # pylock.toml, a hand-edited lock
                         "lockguard.lockfiles.pylock", "lockguard.io.project.written"]


def _modules_of_a_check(tmp_path: Path, *args: str) -> tuple[set[str], str]:
    """The modules `lockguard check` has imported when it exits, and what it printed.

    Run as an installed (not editable) lockguard is: without `site` (-S), whose .pth processing
    would run the editable install's finder, which imports pathlib and more for every interpreter;
    the repository and site-packages are put on sys.path by hand instead, as the finder would."""
    script = ("import sys, atexit\n"
              f"sys.path[:0] = [{str(REPO)!r}]\n"
              f"sys.path.append({sysconfig.get_paths()['purelib']!r})\n"
              f"sys.path.append({sysconfig.get_paths()['platlib']!r})\n"
              f"import lockguard; lockguard.__path__.append({str(REPO)!r})\n"  # constraints/ is lockguard.constraints
              "out = sys.argv[1]\n"
              "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
              "sys.argv = ['lockguard'] + sys.argv[2:]\n"
              "from lockguard.cli import main\nmain()\n")
    out = tmp_path / "modules.txt"
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-S", "-c", script, str(out), *args], cwd=EXAMPLE, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(out.read_text().split()), done.stdout


def test_the_uncached_check_imports_none_of_the_costly_modules(tmp_path):
    first, said = _modules_of_a_check(tmp_path, "check", "--no-cache")  # fills the parse memo
    assert "no findings" in said
    modules, said_again = _modules_of_a_check(tmp_path, "check", "--no-cache")
    assert said_again == said
    costly = sorted(m for m in NOT_ON_THE_CHECK_PATH if m in modules)
    assert not costly, f"the check imported {costly}"
    assert "tomllib" in first or "tomli" in first  # the first run parsed: the memo is what spared it later


def test_a_cached_check_imports_no_rules_at_all(tmp_path):
    """Nor click: the command line is looked up before anything parses it. (collections comes
    with dataclasses, which the value classes are made with.)"""
    _modules_of_a_check(tmp_path, "check")
    modules, said = _modules_of_a_check(tmp_path, "check")
    assert "no findings" in said
    assert not [m for m in modules if m.startswith(("lockguard.check", "lockguard.knowledge", "packaging", "pathlib",
                                                    "click", "typing", "lockguard.cli.commands"))]


def test_finding_to_dict_is_unchanged():
    from lockguard.model.finding import Finding

    finding = Finding("LG100", "error", "lock missing", file="requirements.lock", line=3)
    assert finding.to_dict() == {"code": "LG100", "severity": "error", "message": "lock missing",
                                 "file": "requirements.lock", "line": 3}
    assert json.dumps(finding.to_dict(), sort_keys=True)


# -- digest and the parse memo ---------------------------------------------------------------

def test_digest_is_sha256():
    import hashlib

    from lockguard.model.digest import sha256, sha256_hex

    for data in (b"", b"lockguard", os.urandom(5000)):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
        running = sha256()
        running.update(data)
        running.update(b"x")
        assert running.digest() == hashlib.sha256(data + b"x").digest()


def test_the_parse_memo_returns_the_parse_and_only_for_the_same_text(tmp_path):
    from lockguard.io.project.parse_memo import ParseMemo

    memo = ParseMemo(str(tmp_path))
    calls = []

    def parse(text):
        calls.append(text)
        return {"text": text, "n": [1, 2.5, True, None]}

    assert memo("toml", "a = 1", parse) == {"text": "a = 1", "n": [1, 2.5, True, None]}
    assert memo("toml", "a = 1", parse) == {"text": "a = 1", "n": [1, 2.5, True, None]}
    assert calls == ["a = 1"]
    memo("toml", "a = 2", parse)
    memo("other", "a = 1", parse)  # another kind of parse of the same text is not confused with it
    assert calls == ["a = 1", "a = 2", "a = 1"]
    for entry in tmp_path.rglob("*"):  # a damaged entry is parsed again, never trusted
        if entry.is_file():
            entry.write_bytes(b"\x00garbage")
    assert memo("toml", "a = 1", parse)["text"] == "a = 1" and len(calls) == 4


def test_a_datetime_intent_is_parsed_each_time_and_right(tmp_path):
    """marshal cannot keep a TOML date-time: such an intent is parsed every time, correctly."""
    from lockguard.io.project.parse_memo import ParseMemo
    from lockguard.model.intent_parse import parse_intent

    text = 'python = "3.11"\ncuda = "12.1"\nexclude-newer = 2024-03-01T00:00:00Z\n'
    path = tmp_path / "lockguard.toml"
    memo = ParseMemo(str(tmp_path / "memo"))
    first = parse_intent(text, path, validate=False, memo=memo)
    second = parse_intent(text, path, validate=False, memo=memo)
    assert first == second and first.exclude_newer.year == 2024
    assert first.hash == parse_intent(text, path, validate=False).hash


def test_a_changed_knowledge_file_is_read_again(tmp_path, monkeypatch):
    """The memo is keyed by content: an edited constraints file is never answered from an old parse."""
    import shutil

    from lockguard.errors import InputError
    from lockguard.io.knowledge_files import default_dir, load_knowledge
    from lockguard.io.project.parse_memo import ParseMemo

    folder = tmp_path / "constraints"
    shutil.copytree(default_dir(), folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    memo = ParseMemo(str(tmp_path / "memo"))
    assert load_knowledge(folder, validate=False, memo=memo).hazards
    hazards = (folder / "hazards.toml").read_text()
    (folder / "hazards.toml").write_text(hazards.replace("[[hazard]]", "[[hazzard]]", 1))
    with pytest.raises(InputError, match=r"hazards.toml:\d+: unknown table \[\[hazzard\]\]"):
        load_knowledge(folder, validate=True, memo=memo)


def test_a_lazy_pattern_answers_as_the_compiled_one_and_compiles_on_first_use():
    import re

    from lockguard.model.lazy_pattern import LazyPattern

    source, flags = r"^\s*FROM\s+(\S+?)(?::(\S+))?$", re.I | re.M
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    assert "match" not in vars(lazy)  # nothing compiled yet
    text = "from nvidia/cuda:12.1\nRUN x\nFROM python"
    assert lazy.match(text).groups() == compiled.match(text).groups()
    assert "match" in vars(lazy)  # kept: later calls go straight to the compiled pattern
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in compiled.finditer(text)]
    assert lazy.findall(text) == compiled.findall(text) and lazy.fullmatch("x") is None
    assert lazy.sub("-", text) == compiled.sub("-", text) and lazy.groups == compiled.groups == 2


def test_the_intent_reads_its_cut_off_as_datetime_would():
    """intent_parse takes the date-time types from _datetime (datetime.py's import runs its
    pure-Python fallback first): they are the very same types."""
    import datetime

    from lockguard.model import intent_parse

    assert intent_parse.datetime is datetime.datetime and intent_parse.timezone is datetime.timezone
    assert intent_parse.date is datetime.date and intent_parse.timedelta is datetime.timedelta
