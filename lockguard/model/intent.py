"""The intent: what a user wants locked. Frozen, validated, with a canonical hash."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path

from lockguard.model.cooldown import FIELD as CUTOFF_FIELD
from lockguard.model.cooldown import PACKAGE_FIELD, SPAN_FIELD, Cutoff, stamp
from lockguard.model.names import canonical_requirement_text
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch, PythonVersion

DEFAULT_PLATFORMS = ("linux-64",)
DEFAULT_CHANNELS = ("conda-forge",)
DEFAULT_INDEXES = ("https://pypi.org/simple",)
DEFAULT_PYTORCH_INDEX = "https://download.pytorch.org/whl"
DEFAULT_GLIBC = "2.28"
DEFAULT_NAME = "lockguard"


@dataclass(frozen=True, slots=True)
class CudaRequest:
    """`cuda = "12.1"`, `"none"` (CPU only) or `"auto"` (from the local driver through NVML)."""

    mode: str  # "version" | "none" | "auto"
    version: CudaVersion | None = None

    @classmethod
    def none(cls) -> CudaRequest:
        return cls("none")

    def __str__(self) -> str:
        return str(self.version) if self.mode == "version" else self.mode


@dataclass(frozen=True, slots=True)
class DependencyMetadata:
    """Static metadata for an sdist whose build needs torch (uv's `dependency-metadata`)."""

    name: str
    version: str
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None


@dataclass(frozen=True, slots=True)
class Outputs:
    environment: str = "environment.yml"
    requirements: str = "requirements.lock"
    conda_lock: str = "conda-lock.yml"
    pylock: str | None = None  # opt-in: PEP 751 pylock.toml, a fourth view of the resolution


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class IntentSource:
    """Where an intent was read from: `lockguard.toml`, or `[tool.lockguard]` in pyproject.

    Kept as the absolute path's text, its folder resolved but not the file's own name (the project
    is the folder the intent was found in, also when the intent is a symlink), which the check
    path reads through os.path; `path` and `root` give it as a Path."""

    location: str  # absolute; the folder resolved, a symlinked intent's own name kept
    in_pyproject: bool = False

    @cached_property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        """The file's name (lockguard.toml or pyproject.toml, a symlink's own name)."""
        return os.path.basename(self.location)

    @property
    def folder(self) -> str:
        """The project folder as text (str(root))."""
        return os.path.dirname(self.location)

    def __str__(self) -> str:
        return f"{self.path} [tool.lockguard]" if self.in_pyproject else str(self.path)


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class Intent:
    python: PythonVersion
    cuda: CudaRequest
    driver: DriverVersion | None = None
    gpu: tuple[GpuArch, ...] = ()
    gpu_auto: bool = False
    platforms: tuple[str, ...] = DEFAULT_PLATFORMS
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    conda: tuple[str, ...] = ()
    pip: tuple[str, ...] = ()
    indexes: tuple[str, ...] = DEFAULT_INDEXES
    pytorch_index: str = DEFAULT_PYTORCH_INDEX
    exclude_newer: datetime | None = None
    conda_from_knowledge: bool = False
    glibc: str = DEFAULT_GLIBC
    name: str = DEFAULT_NAME
    dependency_metadata: tuple[DependencyMetadata, ...] = ()
    outputs: Outputs = field(default_factory=Outputs)
    source: IntentSource | None = field(default=None, compare=False)
    # `[profiles.NAME]`: the profile this intent locks (its files are named after it), and on the
    # project's intent the profiles it holds (then only they are locked: model/profiles.py)
    profile: str | None = None
    profiles: tuple[Intent, ...] = ()
    # a cooldown (`exclude-newer = "7 days"`): the canonical span ("P7D"); exclude_newer is then
    # the cut-off it was resolved to (the lock's recorded one, or now minus the span)
    exclude_newer_span: str | None = None
    # `exclude-newer-package = { torch = false, vllm = "2026-11-01" }`: canonical name -> cut-off
    exclude_newer_package: tuple[tuple[str, Cutoff], ...] = ()

    def cutoff(self, name: str) -> Cutoff:
        """The exclude-newer of one (canonical) pip name: its own entry, else the intent's."""
        for package, cutoff in self.exclude_newer_package:
            if package == name:
                return cutoff
        return Cutoff(self.exclude_newer, self.exclude_newer_span)

    @property
    def package_cutoffs(self) -> dict[str, Cutoff]:
        return dict(self.exclude_newer_package)

    @property
    def has_cooldown(self) -> bool:
        """A cut-off given as a span: the lock records what it was resolved to."""
        return self.exclude_newer_span is not None or any(
            c.span is not None for _n, c in self.exclude_newer_package
        )

    @property
    def pip_only(self) -> bool:
        """`channels = []`: a lock for a plain virtual environment (requirements.lock only)."""
        return not self.channels

    def cooldown_record(self) -> dict[str, str]:
        """The lock header fields that record what a cooldown was resolved to: the cut-off used
        and its span (and each package's own); none without a cooldown."""
        out = {}
        if self.exclude_newer_span is not None and self.exclude_newer is not None:
            out[CUTOFF_FIELD] = stamp(self.exclude_newer)
            out[SPAN_FIELD] = self.exclude_newer_span
        spans = [(n, c) for n, c in self.exclude_newer_package if c.span is not None]
        if spans:
            out[PACKAGE_FIELD] = ", ".join(f"{name}={c.record()}" for name, c in spans)
        return out

    def canonical(self) -> dict[str, object]:
        """The intent as plain data, normalized so that only meaningful edits change it.

        Order-free lists (pip, conda, gpu, platforms) are sorted; ordered ones (channels and
        indexes: priority matters) keep their order; defaults are filled in, so writing a default
        explicitly changes nothing.
        """
        return {
            "python": str(self.python),
            "cuda": str(self.cuda),
            "driver": str(self.driver) if self.driver else None,
            "gpu": "auto" if self.gpu_auto else sorted(str(a) for a in self.gpu),
            "platforms": sorted(self.platforms),
            "channels": list(self.channels),
            "conda": sorted(self.conda),
            "pip": sorted(canonical_requirement_text(r) for r in self.pip),
            "indexes": list(self.indexes),
            "pytorch-index": self.pytorch_index,
            # a cooldown is its span: the intent (and its hash) stays the same as days pass
            "exclude-newer": self.exclude_newer_span
            or (self.exclude_newer.isoformat() if self.exclude_newer else None),
            "conda-from-knowledge": self.conda_from_knowledge,
            "glibc": self.glibc,
            "name": self.name,
            "dependency-metadata": sorted(
                (
                    {
                        "name": d.name,
                        "version": d.version,
                        "requires-dist": sorted(
                            canonical_requirement_text(r) for r in d.requires_dist
                        ),
                        "requires-python": d.requires_python,
                    }
                    for d in self.dependency_metadata
                ),
                key=lambda d: (d["name"], d["version"]),
            ),
            "outputs": self._outputs(),
            # only when given: existing intent hashes stay as they were
            **(
                {
                    "exclude-newer-package": {
                        name: cutoff.canonical() for name, cutoff in self.exclude_newer_package
                    }
                }
                if self.exclude_newer_package
                else {}
            ),
            # only in a project with profiles: an intent without them keeps its hash
            **({"profile": self.profile} if self.profile else {}),
            **({"profiles": [p.canonical() for p in self.profiles]} if self.profiles else {}),
        }

    def _outputs(self) -> dict[str, str]:
        outputs = {
            "environment": self.outputs.environment,
            "requirements": self.outputs.requirements,
            "conda-lock": self.outputs.conda_lock,
        }
        # only when asked for: existing intent hashes stay as they were
        if self.outputs.pylock is not None:
            outputs["pylock"] = self.outputs.pylock
        return outputs

    @cached_property
    def hash(self) -> str:
        """sha256 of the canonical intent: stable across key order, comments and whitespace."""
        blob = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()
