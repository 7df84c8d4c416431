"""Compare installed files with the sha256 their RECORD says (`check --env --verify-files`).

A path may appear more than once in a RECORD: a wheel that ships a compiled .pyc (numpy 1.26.4's
numpy/distutils/__pycache__/conv_template.cpython-311.pyc) is listed with the wheel's hash, and
again without a hash as a file pip generated (it compiled over the shipped one). A path the RECORD
lists without a hash anywhere is pip's own output and is not compared; otherwise any hash the
RECORD gives it is accepted. Missing files are LG204's (found without hashing)."""

from __future__ import annotations

import base64
import os

from lockguard.errors import InputError
from lockguard.io.env.dist_records import record_entries
from lockguard.io.read import regular_file_sha256
from lockguard.model.prefix import InstalledDist, PrefixSnapshot


def file_digest(path: str) -> str | None:
    """The urlsafe-b64 sha256 RECORD writes; None when the file is missing, "" when it is not a
    regular file (a FIFO where a module should be matches no hash)."""
    try:
        digest = regular_file_sha256(path)
    except InputError:
        return ""
    except OSError:
        return None
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def changed_files(dist: InstalledDist, root: str) -> list[str]:
    """Paths of the distribution whose bytes match none of the hashes its RECORD gives them."""
    hashes: dict[str, set[str]] = {}
    generated: set[str] = set()
    for entry in record_entries(dist, root):
        if entry.outside:
            continue
        if entry.sha256:
            hashes.setdefault(entry.path, set()).add(entry.sha256)
        else:
            generated.add(entry.path)
    absent = set(dist.absent) | generated
    changed = []
    for path, wanted in hashes.items():
        if path in absent:
            continue
        digest = file_digest(os.path.join(root, path))
        if digest is not None and digest not in wanted:
            changed.append(path)
    return sorted(changed)


def verify_records(snap: PrefixSnapshot, names: set[str] | None = None) -> dict[str, list[str]]:
    """dist-info folder -> its changed files, for the distributions of the prefix (named ones
    only)."""
    out = {}
    for dist in snap.dists:
        if not dist.in_prefix or dist.legacy or (names is not None and dist.name not in names):
            continue  # a legacy .egg-info install has no hashes to compare (LG205 says so)
        changed = changed_files(dist, snap.prefix)
        if changed:
            out[dist.dist_info] = changed
    return out
