"""Sdists whose metadata build failed, remembered until `--refresh`.

A flash-attn sdist whose build imports torch fails the same way on every run (32-55 s of isolated
environment and backend before the same exit 2, issue 23). A failure the sdist itself causes (its
project or build backend, not the network or a timeout: io/index/metadata.py decides) is kept
under the sdist's sha256 and the build environment (interpreter, platform, the `build` and pip that
make the isolated environment, the PIP_* settings that choose what it installs): any change there
may change the outcome, so it is another entry. `--refresh` builds again (and keeps the new outcome).

One entry is one small JSON file, written whole (a temporary file, fsync, rename) and checked when
read (format, fields, the same sdist and environment): anything else is a miss, never an answer.
The interface is `recall` and `remember`, over a folder the caller chooses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

FORMAT = 1
MAX_ENTRY = 64 * 1024  # an entry is a message of a few hundred bytes; a larger file is not one


@dataclass(frozen=True, slots=True)
class BuildEnvironment:
    """What the outcome of an sdist's metadata build depends on besides the sdist."""

    description: tuple[tuple[str, str], ...]

    @classmethod
    def current(cls) -> BuildEnvironment:
        import platform
        from importlib.metadata import PackageNotFoundError, version

        def installed(name: str) -> str:
            try:
                return version(name)
            except PackageNotFoundError:
                return "absent"

        items = {
            "python": f"{sys.implementation.name} {'.'.join(map(str, sys.version_info[:3]))}",
            "executable": sys.executable,
            "platform": f"{sys.platform} {platform.machine()} {' '.join(platform.libc_ver())}",
            "build": installed("build"),
            "pip": installed("pip"),
            "virtualenv": installed("virtualenv"),
        }
        items.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
        return cls(tuple(sorted(items.items())))

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.description).encode()).hexdigest()


class FailedBuilds:
    def __init__(self, folder: Path, environment: BuildEnvironment | None = None, *, refresh: bool = False) -> None:
        self.folder = Path(folder)
        self._environment = environment
        self.refresh = refresh

    @property
    def environment(self) -> BuildEnvironment:
        """Described on first use: a resolve that meets no sdist to build never pays for it."""
        if self._environment is None:
            self._environment = BuildEnvironment.current()
        return self._environment

    def _path(self, sdist_sha256: str) -> Path:
        key = hashlib.sha256(f"{sdist_sha256}\0{self.environment.key}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.json"

    def recall(self, sdist_sha256: str) -> str | None:
        """Why the build of this sdist failed in this environment before; None: not known to fail."""
        if self.refresh or not sdist_sha256:
            return None
        try:
            with open(self._path(sdist_sha256), "rb") as handle:
                data = handle.read(MAX_ENTRY + 1)
            entry = json.loads(data) if len(data) <= MAX_ENTRY else None
        except (OSError, ValueError):
            return None
        valid = (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("sdist") == sdist_sha256
                 and entry.get("environment") == self.environment.key and isinstance(entry.get("message"), str)
                 and entry["message"].strip())
        return entry["message"] if valid else None

    def remember(self, sdist_sha256: str, message: str) -> None:
        """Keep the failure; a folder that cannot be written only costs the memo."""
        if not sdist_sha256:
            return
        path = self._path(sdist_sha256)
        body = json.dumps({"format": FORMAT, "sdist": sdist_sha256, "environment": self.environment.key,
                           "message": message}).encode()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
