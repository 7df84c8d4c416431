"""The parse of constraints/*.toml, kept as an entry of the cache layer (io/cache/).

Parsing the knowledge files (tomllib, and the line of every row for the messages that cite it)
costs more than Python's whole start-up, on every check whose result is not cached (a lock file
changed) and at the start of every resolve, while the files themselves almost never change. The
parse is a pure function of the files' text, of lockguard's code (knowledge/loader.py's
parse_file) and of Python (tomllib), so it is kept under a key holding all of them, in marshal
form (plain dicts, lists, strings, numbers). The rows are checked against the schema and turned
into typed values either way (knowledge/loader.py): the entry only saves the parse. A missing or
unusable entry (damaged, of another shape, data marshal cannot hold) is a miss: the files are
parsed as without a cache.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from typing import TYPE_CHECKING

from lockguard import __version__
from lockguard.io.cache.fingerprints import package_fingerprint
from lockguard.io.cache.store import Store
from lockguard.knowledge.loader import parse_file

if TYPE_CHECKING:
    from collections.abc import Mapping

    from lockguard.knowledge.loader import Parsed

PARSES = Store("knowledge-parse", version=1)


def parses_key(texts: Mapping[str, str]) -> str:
    """Everything the parses depend on: lockguard (version and code), Python, each file's name and
    text."""
    files = hashlib.sha256()
    for name, text in texts.items():
        files.update(f"{name}\0{len(text)}\0{text}\0".encode("utf-8", "surrogatepass"))
    return "\0".join((__version__, package_fingerprint(), sys.version, files.hexdigest()))


class KnowledgeParses:
    """`parse(name, text)` for knowledge/loader.py: the kept parse when the entry for exactly these
    texts holds one, else parse_file's. `save()` keeps the parses made, once the knowledge built."""

    def __init__(self, texts: Mapping[str, str], store: Store = PARSES) -> None:
        self.store = store
        self.key = parses_key(texts)
        self.kept = _decoded(store.get(self.key), set(texts)) or {}
        self.made: dict[str, Parsed] = {}

    def parse(self, name: str, text: str) -> Parsed:
        kept = self.kept.get(name)
        if kept is not None:
            return kept
        parsed = self.made[name] = parse_file(text)
        return parsed

    def save(self) -> None:
        if not self.made:
            return
        try:
            payload = marshal.dumps({**self.kept, **self.made})
        except ValueError:  # a TOML date-time or the like: parsed each time
            return
        self.store.put(self.key, payload)  # a cache that cannot be written only costs speed


def _decoded(payload: bytes | None, names: set[str]) -> dict[str, Parsed] | None:
    """The parses in an entry, or None when it is absent or not of the shape written: a parse
    (data, row lines) for each of `names`."""
    if payload is None:
        return None
    try:
        parses = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(parses, dict) or set(parses) != names:
        return None
    for parsed in parses.values():
        if not (
            isinstance(parsed, tuple)
            and len(parsed) == 2
            and isinstance(parsed[0], dict)
            and isinstance(parsed[1], dict)
            and all(_row_lines(v) for v in parsed[1].values())
        ):
            return None
    return parses


def _row_lines(lines: object) -> bool:
    return isinstance(lines, list) and all(line is None or type(line) is int for line in lines)
