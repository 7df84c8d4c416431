"""The index pages of the intent's direct requirements, requested while the resolver is imported.

A cold `lockguard resolve` spends its first ~0.4 s importing click, packaging, resolvelib and
httpx before it asks the index for anything, and every later request waits on the answers for
the intent's own names (torch, its dependencies, ...). So the CLI boundary starts those few GETs
first, in daemon threads (the resolve command does, before it imports the resolver), and the
index client takes their answers (io/index/client.py) instead
of asking again. Only the requests the client would make itself are made: the intent's first
index, no cached page (or --refresh), the same Accept header; an answer or an error is handed
over as if the client had got it. Anything unexpected here (no intent, a pyproject intent,
--offline, a parse problem) makes this do nothing: the resolve then runs as before.

The threads import nothing. httpx and the modules its first request loads are imported here, in
the main thread, before any of them starts: a module imported by two threads at once, while
the other imports a module of the same cycle, can come back half-initialised (CPython breaks the
import "deadlock" that way), which in CI ended as `partially initialized module 'typing'` in
every early thread and a resolve that waited for their answers for ever.
"""

from __future__ import annotations

import threading

from lockguard.errors import LockguardError
from lockguard.io.index.cache import Cache
from lockguard.io.read import INTENT_LIMIT, read_text
from lockguard.model.intent_parse import parse_toml

_ANSWERS: dict[str, list] = {}  # url -> [threading.Event, response | None, exception | None]
_GUARD = threading.Lock()
_CLIENT = None  # the HttpClient of the early GETs, for their byte and request count
MAX_NAMES = 16


def start(intent_path, *, refresh: bool, offline: bool) -> None:
    """Called with the resolve's options before the resolver is imported; returns once the GETs are
    on their way."""
    global _CLIENT
    with _GUARD:
        _ANSWERS.clear()  # answers of an earlier resolve in this process are never handed out
        _CLIENT = None
    try:
        urls = _urls(intent_path, refresh=refresh, offline=offline)
        if not urls:
            return
        client, headers = _ready_client()
    except Exception:  # best effort: the resolve itself reports any problem with the intent
        return
    with _GUARD:
        _CLIENT = client
        for url in urls:
            _ANSWERS[url] = [threading.Event(), None, None]
    for url in urls:
        threading.Thread(
            target=_fetch, args=(client, url, headers), name="lockguard-early", daemon=True
        ).start()


def _ready_client():
    """The client and the Accept header, with every module a GET loads imported (see the module's
    note)."""
    # the network client only when there is something to fetch: a warm resolve (every page cached)
    # never imports httpx
    # the socket layer encodes the host name with it on the first connect
    import encodings.idna  # noqa: F401

    from lockguard.io.index.http import HttpClient
    from lockguard.io.index.simple_index import JSON_ACCEPT

    client = HttpClient()
    client.prepare()
    return client, {"Accept": JSON_ACCEPT}


def _urls(intent_path, *, refresh: bool, offline: bool) -> list[str]:
    if offline:
        return []
    intent = str(intent_path) if intent_path is not None else "lockguard.toml"
    if not intent.endswith("lockguard.toml"):
        return []  # [tool.lockguard] in pyproject.toml: leave it to the resolve
    data = parse_toml(read_text(intent, what="intent file", limit=INTENT_LIMIT))
    indexes = data.get("indexes") or ["https://pypi.org/simple"]
    index = str(indexes[0]).rstrip("/")
    names = []
    for text in data.get("pip", [])[:MAX_NAMES]:
        head = str(text).strip()
        end = next((i for i, c in enumerate(head) if not (c.isalnum() or c in "._-")), len(head))
        if end:
            names.append(
                "-".join(head[:end].replace("_", "-").replace(".", "-").split("-")).lower()
            )
    urls = [f"{index}/{name}/" for name in dict.fromkeys(names)]
    if not refresh:
        cache = Cache()
        urls = [u for u in urls if not cache.has_page(u)]
    return urls


def _fetch(client, url: str, headers: dict[str, str]) -> None:
    slot = _ANSWERS[url]
    try:
        slot[1] = client.get(url, headers=headers)
    # take() raises a LockguardError as the client's own; after anything else the client asks again
    except BaseException as exc:
        slot[2] = exc
    finally:
        slot[0].set()


def fetched() -> tuple[int, int]:
    """(bytes, requests) of the early GETs, for the resolve's own count."""
    with _GUARD:
        return (_CLIENT.bytes_fetched, _CLIENT.requests) if _CLIENT is not None else (0, 0)


def take(url: str, headers: dict[str, str]):
    """The answer of an early GET of `url` with these headers (waiting for it if it is still on
    its way), once; None when there was none. An early SourceUnreachable is raised here."""
    from lockguard.io.index.simple_index import JSON_ACCEPT  # loaded by the index client that asks

    if headers != {"Accept": JSON_ACCEPT}:
        return None
    with _GUARD:
        slot = _ANSWERS.pop(url, None)
    if slot is None:
        return None
    slot[0].wait()
    # the index could not be read: the same answer as asking again
    if isinstance(slot[2], LockguardError):
        raise slot[2]
    return slot[1]  # None after any other failure: the index client asks itself
