"""A memo of whole resolutions: a `lockguard resolve` whose inputs are all what they were last
time renders the lock files it rendered then, without resolving again.

A resolution is a function of: lockguard's code and the libraries that decide for it (resolvelib,
packaging), the knowledge (constraints/*.toml), the parsed intent, the options, the machine (for
`cuda = "auto"` and `gpu = "auto"`) and the index pages it read. Metadata is keyed by the file's
sha256 and never changes, so the pages name it all. The memo is keyed by all but the pages; the
pages are checked on every lookup against the page cache, with the client's own rule: the entry
holds only while each page it read is the same body (by sha256) and the client would still serve
that body without asking the index (within the TTL, or --offline).

Not memoized, because they depend on more than these inputs: a resolve that warned (an
unreachable PyTorch index changes the answer), one that read no page of a name (a 404 may become
a page), one that solved the conda side (rattler's repodata has its own freshness), --refresh.
A damaged or unexpected entry is a miss, never an answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from importlib.machinery import PathFinder

from lockguard import __version__
from lockguard.io.cache.fingerprints import constraints_fingerprint, package_fingerprint
from lockguard.io.index.cache import Cache

MEMO_FORMAT = 2  # 2: outputs as [path, text] pairs, in the order resolve wrote them
DECIDING_LIBRARIES = ("resolvelib", "packaging")


def code_fingerprint() -> str:
    """lockguard's own modules (path, size, mtime) and the files of the libraries that decide a
    resolution: an upgrade or an edit of any of them makes every memo entry a miss."""
    parts = [__version__, package_fingerprint()]
    for library in DECIDING_LIBRARIES:
        # where it would be imported from, without importing it
        spec = PathFinder.find_spec(library)
        origin = spec.origin if spec else None
        if origin and os.path.exists(origin):
            info = os.stat(origin)
            parts.append(f"{library}:{origin}:{info.st_size}:{info.st_mtime_ns}")
        else:
            parts.append(f"{library}:absent")
    return "\n".join(parts)


def memo_key(*, intent_repr: str, options: dict, machine_repr: str | None) -> str:
    h = hashlib.sha256()
    for part in (
        str(MEMO_FORMAT),
        code_fingerprint(),
        constraints_fingerprint(),
        intent_repr,
        repr(sorted((k, str(v)) for k, v in options.items())),
        machine_repr or "",
    ):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


class Remembered:
    """What a resolve rendered: the lock files (relative path -> text), the platforms resolved,
    the --json summary without its "written" list, and the messages it printed, in order."""

    def __init__(
        self,
        outputs: dict[str, str],
        platforms: list[str],
        summary: dict,
        messages: list[tuple[str, str]],
        pages: dict[str, str],
    ) -> None:
        self.outputs = outputs
        self.platforms = platforms
        self.summary = summary
        self.messages = messages
        self.pages = pages


class ResolveMemo:
    def __init__(self, cache: Cache, key: str, *, ttl: float, offline: bool) -> None:
        self.cache = cache
        self.key = key
        self.ttl = ttl
        self.offline = offline

    def lookup(self, allowed_outputs: set[str]) -> Remembered | None:
        """The remembered resolution, when every page it read is still what the client serves;
        None otherwise. `allowed_outputs`: the lock files the intent can have (an entry naming
        another file is not trusted)."""
        raw = self.cache.get_resolution(self.key)
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            remembered = _entry(entry)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None
        if remembered is None or not set(remembered.outputs) <= allowed_outputs:
            return None
        return (
            remembered
            if all(self._current(url, sha) for url, sha in remembered.pages.items())
            else None
        )

    def _current(self, url: str, sha: str) -> bool:
        state = self.cache.page_state(url)  # (body sha256, fetched at)
        if state is None or state[0] != sha:
            return False
        return self.offline or time.time() - state[1] < self.ttl

    def store(self, remembered: Remembered) -> None:
        entry = {
            "format": MEMO_FORMAT,
            "pages": remembered.pages,
            # pairs, not an object: keys are sorted below; the order they were written in is kept
            "outputs": [[path, text] for path, text in remembered.outputs.items()],
            "platforms": remembered.platforms,
            "summary": remembered.summary,
            "messages": [list(m) for m in remembered.messages],
        }
        # a memo not written only costs the next resolve its speed
        with contextlib.suppress(OSError):
            self.cache.put_resolution(self.key, json.dumps(entry, sort_keys=True).encode())


def _entry(entry) -> Remembered | None:
    if not isinstance(entry, dict) or entry.get("format") != MEMO_FORMAT:
        return None
    pages, pairs = entry["pages"], entry["outputs"]
    if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
        return None
    outputs = {p[0]: p[1] for p in pairs}
    platforms, summary, messages = entry["platforms"], entry["summary"], entry["messages"]
    if not (
        isinstance(pages, dict)
        and pages
        and all(isinstance(k, str) and isinstance(v, str) for k, v in pages.items())
        and isinstance(outputs, dict)
        and outputs
        and all(isinstance(k, str) and isinstance(v, str) for k, v in outputs.items())
        and isinstance(platforms, list)
        and all(isinstance(p, str) for p in platforms)
        and isinstance(summary, dict)
        and isinstance(messages, list)
        and all(
            isinstance(m, list)
            and len(m) == 2
            and m[0] in ("info", "warn")
            and isinstance(m[1], str)
            for m in messages
        )
    ):
        return None
    return Remembered(outputs, platforms, summary, [(m[0], m[1]) for m in messages], pages)
