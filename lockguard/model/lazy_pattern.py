"""A regular expression compiled on first use.

`lockguard check` runs on every commit; compiling a pattern costs 0.1-0.4 ms, and a module's
patterns for what a check seldom meets (Dockerfiles, pylock.toml, a hand-edited lock, the lines
of an error message) would otherwise be compiled on every run, used or not."""

from __future__ import annotations

import re

_METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")


class LazyPattern:
    """Stands for re.compile(pattern, flags): the first use compiles, and keeps the compiled
    pattern's methods on the instance, so later calls cost what the compiled pattern's do."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str):  # only for what the instance does not hold yet
        compiled = re.compile(self.pattern, self.flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
