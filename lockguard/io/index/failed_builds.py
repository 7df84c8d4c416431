"""Sdists whose metadata build failed, remembered until `--refresh`.

A flash-attn sdist whose build imports torch fails the same way on every run (32-55 s of isolated
environment and backend before the same exit 2, issue 23). A failure the sdist itself causes (its
project or build backend, not the network or a timeout: io/index/metadata.py decides) is kept
under the sdist's sha256 and the build environment (interpreter, platform, the `build` and pip that
make the isolated environment, the PIP_* settings that choose what it installs): any change there
may change the outcome, so it is another entry. `--refresh` builds again
(and keeps the new outcome).

One entry of the cache layer (io/cache: written atomically, checksummed and versioned) per sdist and
environment, its JSON checked again when read (fields, the same sdist and environment): anything
else is a miss, never an answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from lockguard.io.cache.store import Store

STORE = Store("failed-build", version=1)


@dataclass(frozen=True, slots=True)
class BuildEnvironment:
    """What the outcome of an sdist's metadata build depends on besides the sdist."""

    description: tuple[tuple[str, str], ...]

    @classmethod
    def current(cls) -> BuildEnvironment:
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
    """The memo, one entry of the cache layer (io/cache) per sdist and build environment."""

    def __init__(
        self, environment: BuildEnvironment | None = None, *, refresh: bool = False
    ) -> None:
        self._environment = environment
        self.refresh = refresh

    @property
    def environment(self) -> BuildEnvironment:
        """Described on first use: a resolve that meets no sdist to build never pays for it."""
        if self._environment is None:
            self._environment = BuildEnvironment.current()
        return self._environment

    def _key(self, sdist_sha256: str) -> str:
        return f"{sdist_sha256}\0{self.environment.key}"

    def recall(self, sdist_sha256: str) -> str | None:
        """Why the build of this sdist failed in this environment before; None: not known to
        fail."""
        if self.refresh or not sdist_sha256:
            return None
        data = STORE.get(self._key(sdist_sha256))
        try:
            entry = json.loads(data) if data is not None else None
        except ValueError:
            return None
        if not isinstance(entry, dict):
            return None
        message = entry.get("message")
        valid = (
            entry.get("sdist") == sdist_sha256
            and entry.get("environment") == self.environment.key
            and isinstance(message, str)
            and message.strip()
        )
        return message if valid else None

    def remember(self, sdist_sha256: str, message: str) -> None:
        """Keep the failure; a cache that cannot be written only costs the memo."""
        if sdist_sha256:
            STORE.put(
                self._key(sdist_sha256),
                json.dumps(
                    {"sdist": sdist_sha256, "environment": self.environment.key, "message": message}
                ).encode(),
            )
