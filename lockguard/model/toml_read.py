"""The one reader of TOML: the standard library's tomllib, or on Python 3.10 its backport tomli
(the same parser, published separately). Writing TOML with comments kept is tomlkit's
(lockfiles/toml_writer.py, model/intent_write.py)."""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover  (Python 3.10)
    import tomli as tomllib

# a ValueError: callers that read untrusted text catch it by this name
TOMLDecodeError = tomllib.TOMLDecodeError


def loads(text: str) -> dict[str, Any]:
    """The TOML document in `text`, typed as tomllib types it."""
    document: dict[str, Any] = tomllib.loads(text)  # annotated: tomli (Python 3.10) ships no types
    return document
