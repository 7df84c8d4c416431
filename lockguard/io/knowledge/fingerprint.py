"""The knowledge fingerprint a lock file's header records (lockfiles/headers.py): the same
constraints tables give the same fingerprint on every machine. Standard library only: check's
proof tier computes it before the knowledge is parsed."""

from __future__ import annotations

import hashlib
import os

from lockguard.errors import InputError
from lockguard.io.cache.fingerprints import constraints_folder
from lockguard.io.read import MIB, read_bytes


def knowledge_fingerprint() -> str:
    """sha256 over the name and bytes of every constraints table (*.toml) check's rules may read:
    the same files give the same fingerprint on every machine (a lock file's header records it,
    lockfiles/headers.py). A missing folder or an unreadable table is a fingerprint of its own
    (no lock file's proof matches it: the check runs its full rules, which report the problem)."""
    digest = hashlib.sha256()
    folder = constraints_folder()
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".toml"))
    except OSError:
        return "0" * 64
    for name in names:
        try:
            data = read_bytes(os.path.join(folder, name), what="knowledge file", limit=16 * MIB)
        except (OSError, InputError):
            data = b"\0unreadable\0"
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()
