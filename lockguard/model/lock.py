"""A lock: one resolution per platform, seen through three files."""

from __future__ import annotations

from dataclasses import dataclass, field

from lockguard.model.cuda_stack import CudaStack
from lockguard.model.intent import Intent
from lockguard.model.names import INTENT  # noqa: F401  (re-exported for the resolver)
from lockguard.model.pip_lock import PipResolution
from lockguard.model.target import Target


@dataclass(frozen=True, slots=True)
class CondaRecord:
    """One solved conda package, with what conda-lock and an installer need."""

    name: str
    version: str
    build: str
    channel: str  # the channel URL
    subdir: str
    url: str
    md5: str
    sha256: str
    depends: tuple[str, ...] = ()
    constrains: tuple[str, ...] = ()
    size: int | None = None
    timestamp: int | None = None
    build_number: int = 0
    noarch: str | None = None

    @property
    def spec(self) -> str:
        return f"{self.name}={self.version}={self.build}"


@dataclass(frozen=True, slots=True)
class CondaSide:
    specs: tuple[str, ...]  # what was asked of the solver (or pinned from knowledge)
    records: tuple[CondaRecord, ...] = ()
    solved: bool = True  # False: pinned at version level from the knowledge, no solve
    channels: tuple[str, ...] = ()
    virtual_packages: tuple[str, ...] = ()

    def record(self, name: str) -> CondaRecord | None:
        return next((r for r in self.records if r.name == name), None)


@dataclass(frozen=True, slots=True)
class PlatformLock:
    target: Target
    stack: CudaStack
    pip: PipResolution
    conda: CondaSide | None = None
    index_urls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Lock:
    intent: Intent
    platforms: tuple[PlatformLock, ...] = field(default_factory=tuple)

    @property
    def conda_solved(self) -> bool:
        return all(p.conda is None or p.conda.solved for p in self.platforms)
