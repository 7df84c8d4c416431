"""Which wheels install the same files: the fact behind LG121.

`constraints/shared_files.toml` lists groups of wheels that all install one path (read from their
RECORD): nvidia-nccl-cu12 and nvidia-nccl-cu13 both write nvidia/nccl/lib/libnccl.so.2, so one lock
can never hold both. A wheel in no group shares no file with any other wheel lockguard knows of,
whatever its name says (nvidia-cutlass-dsl-libs-cu12 installs into nvidia_cutlass_dsl/cu12/).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from lockguard.knowledge.row import Row
from lockguard.model import codes


@dataclass(frozen=True, slots=True)
class SharedFiles(Row):
    wheels: tuple[str, ...]  # canonical names of the wheels that all install `path`
    path: str


@dataclass(frozen=True, slots=True)
class SeparateFiles(Row):
    wheels: tuple[str, ...]  # read, and found to share no path


@dataclass(frozen=True, slots=True)
class Clash:
    """`name` and `other` cannot both be in a lock: they both install `path`."""

    name: str
    other: str
    path: str
    origin: str  # constraints/shared_files.toml:NN

    @property
    def why(self) -> str:
        return (
            f"{codes.SHARED_FILES.code}: {self.name} and {self.other} both install {self.path}, "
            "so each overwrites the other's "
            f"files; {self.origin}"
        )


@dataclass(frozen=True)  # not slotted: a cached_property keeps its value in __dict__
class WheelFiles:
    shared: tuple[SharedFiles, ...]
    separate: tuple[SeparateFiles, ...]

    @cached_property
    def _by_name(self) -> dict[str, tuple[SharedFiles, ...]]:
        found: dict[str, list[SharedFiles]] = {}
        for row in self.shared:
            for name in row.wheels:
                found.setdefault(name, []).append(row)
        return {name: tuple(rows) for name, rows in found.items()}

    def clashes_of(self, name: str) -> list[Clash]:
        """The wheels that cannot be installed next to wheel `name` (canonical), each once."""
        out: dict[str, Clash] = {}
        for row in self._by_name.get(name, ()):
            for other in row.wheels:
                if other != name and other not in out:
                    out[other] = Clash(name, other, row.path, row.origin)
        return list(out.values())

    def clashes_among(self, names: Iterable[str]) -> list[tuple[SharedFiles, tuple[str, ...]]]:
        """(row, the names of `names` in it) for each row that two or more of `names` are in."""
        present = set(names)
        out: list[tuple[SharedFiles, tuple[str, ...]]] = []
        for row in self.shared:
            found = tuple(n for n in row.wheels if n in present)
            if len(found) > 1:
                out.append((row, found))
        return out

    @property
    def listed(self) -> tuple[str, ...]:
        """Every wheel a row names, in table order, each once (what verify reads)."""
        groups = [row.wheels for row in self.shared] + [row.wheels for row in self.separate]
        return tuple(dict.fromkeys(n for wheels in groups for n in wheels))

    def major_of(self, name: str) -> int | None:
        """The CUDA major of a wheel a shared-files row names (its -cuNN); None: not named there."""
        if name not in self._by_name:
            return None
        head, _, tail = name.rpartition("-cu")
        return int(tail) if head and tail.isdigit() else None
