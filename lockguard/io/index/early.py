"""The index pages of the intent's direct requirements, requested while the resolver is imported.

A cold `lockguard resolve` spends its first ~0.4 s importing click, packaging, resolvelib and
httpx before it asks the index for anything, and every later request waits on the answers for
the intent's own names (torch, its dependencies, ...). So the CLI boundary starts those few GETs
first, in daemon threads, and the index client takes their answers (io/index/client.py) instead
of asking again. Only the requests the client would make itself are made: the intent's first
index, no cached page (or --refresh), the same Accept header; an answer or an error is handed
over as if the client had got it. Anything unexpected here (no intent, a pyproject intent,
--offline, a parse problem) makes this do nothing: the resolve then runs as before.
"""

from __future__ import annotations

import os
import threading

_ANSWERS: dict[str, list] = {}  # url -> [threading.Event, response | None, exception | None]
_GUARD = threading.Lock()
MAX_NAMES = 16


def start(argv: list[str]) -> None:
    """Called with the command line before the resolver is imported; returns at once."""
    global _CLIENT
    with _GUARD:
        _ANSWERS.clear()  # answers of an earlier resolve in this process are never handed out
        _CLIENT = None
    try:
        urls = _urls(argv)
    except Exception:  # best effort: the resolve itself reports any problem with the intent
        return
    with _GUARD:
        for url in urls:
            _ANSWERS[url] = [threading.Event(), None, None]
    for url in urls:
        threading.Thread(target=_fetch, args=(url,), name="lockguard-early", daemon=True).start()


def _urls(argv: list[str]) -> list[str]:
    args = list(argv)
    while args and args[0].startswith("-"):  # global options (-v) before the command
        args.pop(0)
    if not args or args[0] != "resolve" or "--offline" in args or "--help" in args or "-h" in args:
        return []
    refresh = "--refresh" in args
    intent = "lockguard.toml"
    for i, arg in enumerate(args):
        if arg == "--intent" and i + 1 < len(args):
            intent = args[i + 1]
        elif arg.startswith("--intent="):
            intent = arg.partition("=")[2]
    if not intent.endswith("lockguard.toml"):
        return []  # [tool.lockguard] in pyproject.toml: leave it to the resolve
    from lockguard.io.project.parse_memo import default_memo
    from lockguard.io.project.textfile import INTENT_LIMIT, read_text
    from lockguard.model.intent_parse import parse_toml

    data = default_memo()("toml", read_text(intent, what="intent file", limit=INTENT_LIMIT), parse_toml)
    indexes = data.get("indexes") or ["https://pypi.org/simple"]
    index = str(indexes[0]).rstrip("/")
    names = []
    for text in data.get("pip", [])[:MAX_NAMES]:
        head = str(text).strip()
        end = next((i for i, c in enumerate(head) if not (c.isalnum() or c in "._-")), len(head))
        if end:
            names.append("-".join(head[:end].replace("_", "-").replace(".", "-").split("-")).lower())
    urls = [f"{index}/{name}/" for name in dict.fromkeys(names)]
    if not refresh:
        from lockguard.io.index.cache import Cache

        cache = Cache()
        urls = [u for u in urls if not os.path.exists(cache.page_meta_path(u))]
    return urls


def _fetch(url: str) -> None:
    from lockguard.io.index.http import HttpClient
    from lockguard.io.index.simple_index import JSON_ACCEPT

    slot = _ANSWERS[url]
    try:
        slot[1] = _client(HttpClient).get(url, headers={"Accept": JSON_ACCEPT})
    except BaseException as exc:  # handed to the index client, which raises it as its own
        slot[2] = exc
    finally:
        slot[0].set()


_CLIENT = None


def _client(factory):
    global _CLIENT
    with _GUARD:
        if _CLIENT is None:
            _CLIENT = factory()
        return _CLIENT


def fetched() -> tuple[int, int]:
    """(bytes, requests) of the early GETs, for the resolve's own count."""
    with _GUARD:
        return (_CLIENT.bytes_fetched, _CLIENT.requests) if _CLIENT is not None else (0, 0)


def take(url: str, headers: dict[str, str]):
    """The answer of an early GET of `url` with these headers (waiting for it if it is still on
    its way), once; None when there was none. An early error is raised here."""
    from lockguard.io.index.simple_index import JSON_ACCEPT

    if headers != {"Accept": JSON_ACCEPT}:
        return None
    with _GUARD:
        slot = _ANSWERS.pop(url, None)
    if slot is None:
        return None
    slot[0].wait()
    if slot[2] is not None:
        raise slot[2]
    return slot[1]
