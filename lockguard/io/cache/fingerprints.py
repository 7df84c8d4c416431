"""What a cached answer depends on besides its inputs: lockguard's own code (every module by path,
size and mtime) and the constraints files it reads. The check memo, the resolution memo and the
parsed knowledge are keyed by them. Standard library only (the cached check path runs it before the
rest of lockguard is imported)."""

from __future__ import annotations

import hashlib
import os

import lockguard
from lockguard.errors import InputError
from lockguard.io.read import MIB, read_bytes


def constraints_folder() -> str:
    """`LOCKGUARD_CONSTRAINTS`, else the constraints shipped with lockguard."""
    folder = os.environ.get("LOCKGUARD_CONSTRAINTS")
    if not folder:
        import lockguard.constraints as shipped

        folder = os.path.dirname(shipped.__file__)
    return folder


def constraints_fingerprint() -> str:
    parts = []
    for entry in sorted(os.scandir(constraints_folder()), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            stat = entry.stat()
            parts.append(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(parts)


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


def package_fingerprint() -> str:
    """Every module of the installed lockguard by relative path, size and mtime: a change to its
    code without a version bump must not replay an answer the old code gave. Stat, not contents:
    0.8 ms for the package where hashing its bytes costs 7.5 ms on this path."""
    package = os.path.dirname(os.path.abspath(lockguard.__file__))
    parts = []
    for relative in _modules(package, ""):
        try:
            info = os.stat(os.path.join(package, relative))
            parts.append(f"{relative}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{relative}:unreadable")
    return ";".join(parts)


def _modules(folder: str, prefix: str) -> list[str]:
    """The .py files under `folder`, relative and in a stable order (no __pycache__, no links)."""
    out = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                out += _modules(entry.path, prefix + entry.name + "/")
            elif entry.name.endswith(".py") and entry.is_file(follow_symlinks=False):
                out.append(prefix + entry.name)
    return out
