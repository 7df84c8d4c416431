"""The pins of a lock file as comparable entries, and their digest (the header's `lockguard-pins`).

The body hash tells that a file changed; the pins digest, written next to it, tells whether what
changed is a pin (a name, a version, a conda build) or something else (comments, hashes, index
options, layout), so `check` can say which without lockguard's own copy of what it wrote.
"""

from __future__ import annotations

import hashlib


def entries(kind: str, text: str) -> dict[str, tuple[str, tuple, int | None]]:
    """name -> (the pinned version, its hashes, its line). Raises LockSyntaxError for a file that
    is not in the form lockguard writes."""
    from lockguard.lockfiles import conda_lock, environment_yml, requirements_lock

    if kind == "requirements":
        return {e.name: (e.version, e.hashes, e.line) for e in requirements_lock.parse(text).entries.values()}
    if kind == "environment":
        env = environment_yml.parse(text)
        out = {f"pip {n}": (v, (), line) for n, (v, line) in env.pip.items()}
        out.update({f"conda {n}": (f"{v}={b}" if b else v, (), line) for n, (v, b, line) in env.conda.items()})
        return out
    if kind == "pylock":
        from lockguard.lockfiles import pylock

        return {p.name: (p.version, tuple(sorted(h for f in p.files for h in f.hashes.values())), p.line)
                for p in pylock.read(text).packages.values()}
    packages = conda_lock.read_document(text).get("package") or []
    return {f"{p['manager']} {p['name']} ({p['platform']})":
            (str(p.get("version")) + (f"={p['build']}" if p.get("build") else ""),
             tuple(sorted((p.get("hash") or {}).items())) if isinstance(p.get("hash"), dict) else (), None)
            for p in packages}


def pins_digest(kind: str, text: str) -> str:
    """sha256 over the sorted `name==version` pins (hashes and lines left out)."""
    pins = sorted(f"{name}=={version}" for name, (version, _hashes, _line) in entries(kind, text).items())
    return hashlib.sha256("\n".join(pins).encode()).hexdigest()
