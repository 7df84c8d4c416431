"""What an intent value may be, checked as text (no file system, no network): a URL a request can
be made to, and an `[outputs]` path that stays inside the project and replaces nothing the project
needs. model/intent_parse.py reads the intent with these."""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from urllib.parse import urlsplit

from lockguard.model.lock_names import BY_KIND

URL = re.compile(r"(https?|file)://\S+")
_PLAIN_URL = re.compile(
    r"https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::(\d{1,5}))?(?:/[^\s\\]*)?", re.ASCII
)
_HOST = re.compile(
    r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?",
    re.ASCII,
)
# files a lock output must never replace: the intent, the project's metadata, the VCS
PROTECTED_FILES = {
    "lockguard.toml",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    ".gitignore",
    ".gitattributes",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
}
PROTECTED_FOLDERS = {".git", ".hg", ".svn", ".lockguard", ".venv", "node_modules"}


def folded(path: str) -> str:
    """A path as the file system may compare it: normalised, case folded."""
    return posixpath.normpath(path).casefold()


def output_path_problem(value: str, key: str, intent_name: str) -> str | None:
    """Why an `[outputs]` value is not a safe lock file path inside the project, or None.

    Pure and syntactic; the writer also resolves symlinks before writing (io/project/files.py)."""
    if not value or value != value.strip():
        return f"{quoted(value)} is empty or has surrounding spaces"
    if any(ord(c) < 32 or c == "\\" for c in value) or len(value) > 255:
        return f"{quoted(value)} has control characters, a backslash, or is too long"
    if value.startswith(("/", "~")) or (len(value) > 1 and value[1] == ":"):
        return f"{quoted(value)} is not a path relative to the project folder"
    parts = value.split("/")
    if ".." in parts or "" in parts[:-1] or parts[-1] in ("", "."):
        return f"{quoted(value)} leaves the project folder or names a folder"
    normalized = posixpath.normpath(value)
    folders = normalized.split("/")[:-1]
    if any(part in PROTECTED_FOLDERS for part in folders):
        return (
            f"{quoted(value)} is inside {next(p for p in folders if p in PROTECTED_FOLDERS)}/, "
            "which lockguard never writes"
        )
    name = normalized.rsplit("/", 1)[-1]
    if normalized == intent_name or name in PROTECTED_FILES:
        return f"{quoted(value)} would overwrite {name}"
    suffixes = BY_KIND[key].suffixes if key in BY_KIND else ()
    if suffixes and not name.endswith(suffixes):
        return f"{quoted(value)} must end with {' or '.join(suffixes)}"
    return None


def url_problem(text: str) -> str | None:
    """Why `text` is not an http(s):// or file:// URL a request can be made to, or None."""
    if not URL.fullmatch(text):
        return "is not an http(s):// or file:// URL"
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return "has control characters"
    # the usual https://host[:port]/path: no URL parser to import
    plain = _PLAIN_URL.fullmatch(text)
    if plain:
        return (
            None
            if not plain.group(1) or 0 < int(plain.group(1)) <= 65535
            else f"has port {plain.group(1)}, outside 1-65535"
        )
    try:
        parts = urlsplit(text)
        port = parts.port  # raises for a port outside 0-65535 or not a number
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535"
        return f"cannot be parsed ({exc})"
    if parts.scheme == "file":
        return None if parts.path not in ("", "/") else "names no folder"
    host = parts.hostname or ""
    if not host:
        return "names no host"
    if port == 0:
        return "has port 0"
    if "[" not in parts.netloc and not _HOST.fullmatch(host):
        return f"has a host name that is not valid ({quoted(host)})"
    return None


def quoted(value: str, limit: int = 80) -> str:
    """A value quoted for a message: never the whole of a huge input."""
    text = value if len(value) <= limit else f"{value[:limit]}... ({len(value):,} characters)"
    return repr(text)


def name_of(path: Path | str) -> str:
    """The file name of a path (a Path, or its text)."""
    return os.path.basename(path) if isinstance(path, str) else path.name
