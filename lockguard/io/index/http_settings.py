"""The HTTP settings lockguard reads from the environment (LOCKGUARD_HTTP_TIMEOUT, ...), apart from
io/index/http.py so that a command which only needs a number (the uv engine's UV_HTTP_TIMEOUT)
does not import httpx: importing it and tearing it down at exit costs a warm clean-install about
80 ms (issue 32)."""

from __future__ import annotations

import os

from lockguard.errors import InputError

ENV_TIMEOUT = "LOCKGUARD_HTTP_TIMEOUT"
DEFAULT_TIMEOUT = 10.0  # seconds without a byte before a request is given up


def request_timeout() -> float:
    """Seconds a request waits for an answer: LOCKGUARD_HTTP_TIMEOUT, else DEFAULT_TIMEOUT."""
    return env_setting(ENV_TIMEOUT, DEFAULT_TIMEOUT, float)


def env_setting(name: str, default, kind, *, zero: bool = False):
    """A number from the environment; one that is not a positive number (or 0, where `zero`) is
    bad input (exit 2)."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not (value > 0 or (zero and value == 0)):
        raise InputError(
            f"{name}={text!r} is not a positive {'whole ' if kind is int else ''}number",
            hint=f"unset it, or set it like {name}={default}",
        )
    return value
