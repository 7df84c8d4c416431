"""A memo of parsed TOML: what a pure parser made of a text, kept under the text's sha256.

Importing tomllib and parsing the 80 KB of constraints/*.toml cost more than Python's whole
start-up, on every `lockguard check` whose result is not cached (a lock changed) and at the start
of every resolve. Parsing is a pure function of the text, so its result (plain data: dicts,
lists, strings, numbers) is kept in marshal form under the text's digest, like Python keeps
bytecode: a changed file has another digest and is parsed again. Anything that goes wrong here
(no cache folder, a damaged entry, data marshal cannot hold) only costs the parse.
"""

from __future__ import annotations

import marshal
import os

from lockguard import __version__
from lockguard.io.project.cache_folder import cache_folder


class ParseMemo:
    """`memo(kind, text, parse)`: parse(text)'s result, from the memo when this exact text (and
    lockguard version, and kind of parse) was parsed before."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root or cache_folder("parsed")

    def _path(self, kind: str, text: str) -> str:
        from lockguard.model.digest import sha256

        digest = sha256(f"{kind}\0{__version__}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
        return os.path.join(self.root, f"{digest}.marshal")

    def __call__(self, kind: str, text: str, parse):
        path = self._path(kind, text)
        try:
            with open(path, "rb") as handle:
                found = marshal.loads(handle.read())
            if isinstance(found, tuple) and len(found) == 2 and found[0] == kind:
                return found[1]
        except (OSError, EOFError, ValueError, TypeError):
            pass
        value = parse(text)
        self._store(path, kind, value)
        return value

    @staticmethod
    def _store(path: str, kind: str, value) -> None:
        try:
            data = marshal.dumps((kind, value))
        except ValueError:
            return  # a TOML date-time or the like: not kept, parsed each time
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except OSError:
            pass  # a memo that cannot be written only costs speed


_DEFAULT: ParseMemo | None = None


def default_memo() -> ParseMemo:
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.root != cache_folder("parsed"):
        _DEFAULT = ParseMemo()
    return _DEFAULT
