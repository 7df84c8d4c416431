"""A memo of parsed TOML: what a pure parser made of a text, kept under the text's digest.

Importing tomllib and parsing the 80 KB of constraints/*.toml cost more than Python's whole
start-up, on every `lockguard check` whose result is not cached (a lock changed) and at the start
of every resolve. Parsing is a pure function of the text, so its result (plain data: dicts,
lists, strings, numbers) is kept in marshal form, like Python keeps bytecode: an entry of the
cache layer (io/cache/) whose key is the kind of parse, lockguard's version and the whole text,
so a changed file, or an entry copied under another text's name, is parsed again. Anything that
goes wrong here (no cache folder, a damaged entry, data marshal cannot hold) only costs the parse.
"""

from __future__ import annotations

import marshal

from lockguard import __version__
from lockguard.io.cache.store import Store

KIND = "parsed"
VERSION = 1


class ParseMemo:
    """`memo(kind, text, parse)`: parse(text)'s result, from the memo when this exact text (and
    lockguard version, and kind of parse) was parsed before. `root`: another cache root (tests)."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root
        self.store = Store(KIND, VERSION, root)

    def __call__(self, kind: str, text: str, parse):
        key = f"{kind}\0{__version__}\0{text}"
        data = self.store.get(key)
        if data is not None:
            try:
                found = marshal.loads(data)
                if isinstance(found, tuple) and len(found) == 2 and found[0] == kind:
                    return found[1]
            except (EOFError, ValueError, TypeError):
                pass
        value = parse(text)
        try:  # noqa: SIM105 (contextlib imports collections: the check path avoids it)
            self.store.put(key, marshal.dumps((kind, value)))
        except ValueError:
            pass  # a TOML date-time or the like: not kept, parsed each time
        return value


_DEFAULT: ParseMemo | None = None


def default_memo() -> ParseMemo:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ParseMemo()
    return _DEFAULT
