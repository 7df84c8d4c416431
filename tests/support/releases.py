"""A project whose index changes between resolves, the way a real index does over months: new
releases appear (the simple pages are served again with more files), a release is yanked (with a
reason) or removed. Real wheels, a real HTTP index on 127.0.0.1, real resolves."""

from __future__ import annotations

import json
from pathlib import Path

from lockguard.lockfiles import requirements_lock
from tests.support.index_server import LocalIndex
from tests.support.wheels import build_wheel


class Releases:
    def __init__(self, index: LocalIndex, wheels: Path) -> None:
        self.index = index
        self.wheels = wheels

    def publish(self, name: str, version: str, requires=(), **kw) -> Path:
        return self.index.add(
            build_wheel(self.wheels / f"{name}-{version}", name, version, requires=requires, **kw)
        )

    def _file(self, name: str, version: str) -> Path:
        stem = f"{name.replace('-', '_')}-{version}-"
        found = [p for p in self.index.files_dir.iterdir() if p.name.startswith(stem)]
        assert found, f"no file of {name} {version} on the index"
        return found[0]

    def yank(self, name: str, version: str, reason: str) -> None:
        self.index.yank_reasons[self._file(name, version).name] = reason

    def withdraw(self, name: str, version: str) -> None:
        """The release disappears from the index (deleted by its author, or a mirror that lost
        it)."""
        self._file(name, version).unlink()


def write_intent(
    project: Path,
    index_url: str,
    pip: list[str],
    *,
    cuda: str = "none",
    extra: str = "",
    channels: list[str] | None = None,
    conda: list[str] | None = None,
) -> Path:
    project.mkdir(parents=True, exist_ok=True)
    lines = [
        'python = "3.11"',
        f'cuda = "{cuda}"',
        f"channels = {json.dumps(channels or [])}",
        f'indexes = ["{index_url}"]',
        f"pip = {json.dumps(pip)}",
    ]
    if conda:
        lines.append(f"conda = {json.dumps(conda)}")
    (project / "lockguard.toml").write_text("\n".join(lines) + "\n" + extra)
    return project / "lockguard.toml"


def pins(project: Path, name: str = "requirements.lock") -> dict[str, str]:
    return {
        n: e.version
        for n, e in requirements_lock.parse((project / name).read_text()).entries.items()
    }


def months_later(monkeypatch, tmp_path: Path, label: str) -> None:
    """Another day, another machine: a cache that has never seen the index (so its pages are read
    again, with whatever was published since)."""
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path / f"cache-{label}"))
