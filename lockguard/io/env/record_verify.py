"""Compare installed files with the sha256 their RECORD says (`check --env --verify-files`)."""

from __future__ import annotations

import base64
import hashlib
import os

from lockguard.io.env.prefix_scan import record_entries
from lockguard.model.finding import ERROR, Finding
from lockguard.model.prefix import PrefixSnapshot


def verify_records(snap: PrefixSnapshot, names: set[str] | None = None) -> list[Finding]:
    out = []
    for dist in snap.dists:
        if not dist.in_prefix or (names is not None and dist.name not in names):
            continue
        changed, missing = [], []
        for entry in record_entries(dist, snap.prefix):
            if entry.outside or not entry.sha256:
                continue
            path = os.path.join(snap.prefix, entry.path)
            try:
                with open(path, "rb") as handle:
                    digest = hashlib.file_digest(handle, "sha256").digest() if hasattr(hashlib, "file_digest") \
                        else hashlib.sha256(handle.read()).digest()
            except FileNotFoundError:
                missing.append(entry.path)
                continue
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != entry.sha256:
                changed.append(entry.path)
        if changed or missing:
            parts = []
            if changed:
                parts.append(f"{len(changed)} changed ({', '.join(changed[:3])}{'...' if len(changed) > 3 else ''})")
            if missing:
                parts.append(f"{len(missing)} missing ({', '.join(missing[:3])}{'...' if len(missing) > 3 else ''})")
            out.append(Finding("LG203", ERROR, f"{dist.name} {dist.version}: files differ from its RECORD: "
                               + "; ".join(parts), "reinstall it: `lockguard clean-install`", dist.dist_info))
    return out
