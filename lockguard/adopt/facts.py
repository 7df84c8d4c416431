"""What existing project files say about the intent, each fact with the file and line it came from.

The readers (requirements files, pyproject.toml, environment.yml, Dockerfiles, a captured working
environment) turn text into `Fact`s and `Skipped` lines; `adopt.mapping` turns facts into intent
values. Nothing here guesses: a line that says nothing lockguard can use is a `Skipped`, with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# what a fact is about
PYTHON = "python"  # "3.9"
CUDA = "cuda"  # "12.1" or "none"
GLIBC = "glibc"  # "2.17" (from sysroot_linux-64)
CHANNEL = "channel"  # a conda channel name or URL
CONDA = "conda"  # a conda MatchSpec, as written
PIP = "pip"  # a PEP 508 requirement, as written
INDEX = "index"  # --index-url
EXTRA_INDEX = "extra-index"  # --extra-index-url (not a PyTorch one)
PYTORCH_INDEX = "pytorch-index"  # the base of a PyTorch index (.../whl), when not the default
REQUIRES_PYTHON = "requires-python"  # a specifier that the chosen python must satisfy
ENV_NAME = "name"  # a conda environment's name (environment.yml `name:`)


@dataclass(frozen=True, slots=True)
class Origin:
    file: str  # as the user named it (relative paths stay relative)
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class Fact:
    key: str
    value: str
    origin: Origin
    why: str = ""  # what in the file says so: "FROM nvidia/cuda:12.1.1-...", "cudatoolkit=11.8"

    @property
    def note(self) -> str:
        """The comment written next to the value in the intent."""
        return f"{self.origin}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True, slots=True)
class Skipped:
    origin: Origin
    text: str
    reason: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.text} ({self.reason})"


@dataclass
class SourceFacts:
    facts: list[Fact] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was carried over differently, and why

    def add(self, key: str, value: str, origin: Origin, why: str = "") -> None:
        self.facts.append(Fact(key, value, origin, why))

    def skip(self, origin: Origin, text: str, reason: str) -> None:
        self.skipped.append(Skipped(origin, " ".join(text.split()), reason))

    def extend(self, other: SourceFacts) -> None:
        self.facts += other.facts
        self.skipped += other.skipped
        self.notes += other.notes

    def of(self, key: str) -> list[Fact]:
        return [f for f in self.facts if f.key == key]
