"""A short, bounded question to a conda channel: can this machine reach it at all? `lockguard init`
asks it once, so that an intent written where conda-forge is out of reach says so and pins the
conda side from lockguard's knowledge (`conda-from-knowledge = true`) instead of leaving
`lockguard resolve` to fail on it (exit 4).

Any HTTP answer means reachable (a 404 is the channel's answer, not the network's); a refused or
unresolved connection, or no answer within PROBE_TIMEOUT seconds, is out of reach. One request,
no retry, a one-byte range: never a download of the channel's index. LOCKGUARD_CHANNEL_PROBE=0
skips it (the tests' default: they never reach out to the network)."""

from __future__ import annotations

import os

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import AnswerTooLarge, HttpClient

ENV_PROBE = "LOCKGUARD_CHANNEL_PROBE"
PROBE_TIMEOUT = 3.0
CHANNEL_ALIAS = "https://conda.anaconda.org"  # where rattler finds a channel given by name


def channel_url(channel: str) -> str:
    """The channel's base URL: a name (conda-forge) under conda.anaconda.org, a URL as given."""
    if "://" in channel:
        return channel.rstrip("/")
    return f"{CHANNEL_ALIAS}/{channel.split('::')[0].strip('/')}"


def probing() -> bool:
    return os.environ.get(ENV_PROBE, "1").strip().lower() not in ("0", "no", "false", "off")


def out_of_reach(channel: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why `channel` cannot be reached from here (None: it answered, or it is a local folder)."""
    base = channel_url(channel)
    if base.startswith("file://"):
        return None
    url = f"{base}/noarch/repodata.json"
    with HttpClient(timeout=timeout, retries=0) as http:
        try:
            http.get(url, headers={"Range": "bytes=0-0"}, max_bytes=1 << 20)
        except AnswerTooLarge:
            return None  # it answered (without honouring the range)
        except SourceUnreachable as exc:
            return exc.message
    return None
