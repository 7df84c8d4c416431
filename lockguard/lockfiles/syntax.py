"""A lock file that is not in the form lockguard writes: where, and what is wrong.

The readers are strict because a lock is a contract: a line they skipped would be a pin that
`check` never sees but pip installs (or the other way round). Converted to InputError (exit 2,
file and line) where the file's path is known."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version


class LockSyntaxError(ValueError):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def clip(text: str, limit: int = 80) -> str:
    """A piece of the input for an error message: never the whole of a huge line."""
    text = text.replace("\t", "\\t")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


MAX_VERSION = 128  # characters: no release on PyPI comes close; a longer "version" is damage
_LOCAL_LABELS = (
    "cpu",
)  # with cuNNN: the only local labels lockguard writes (the PyTorch index's builds)


def pip_version_problem(version: str) -> str | None:
    """Why `version` is not a pip pin lockguard writes (None when it is one): a PEP 440 version of a
    sane length whose local label, if any, is a PyTorch build (`+cpu`, `+cu121`)."""

    if len(version) > MAX_VERSION:
        return f"the version is {len(version):,} characters long"
    try:
        local = Version(version).local
    except InvalidVersion:
        return f"{clip(version)!r} is not a PEP 440 version"
    if local is not None and local not in _LOCAL_LABELS and not _is_cuda_label(local):
        return (
            f"+{clip(local)} is not a PyTorch build label "
            "(lockguard writes +cpu or +cuXYZ, e.g. +cu121)"
        )
    return None


def _is_cuda_label(label: str) -> bool:
    digits = label[2:]
    return label.startswith("cu") and len(digits) == 3 and digits.isascii() and digits.isdigit()
