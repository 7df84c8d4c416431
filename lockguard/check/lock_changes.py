"""What changed between two locks: packages added, removed, upgraded, downgraded (or rebuilt, for
a conda record of the same version), the CUDA stack first, and the CUDA facts that move with them
(torch's CUDA, the driver floor, the GPU architectures of the torch build, the cuDNN major).

The same report serves every relock (`lockguard resolve` prints it and puts it in --json) and
`lockguard diff` (two lock files, or a git revision against the working tree). Pure: the views
are read from lock file texts by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from packaging.version import InvalidVersion, Version

from lockguard.check.lock_facts import facts_of
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.lock_view import LockView
from lockguard.model.stack_names import in_cuda_stack

# what a side maps a name to: pip a version, conda (version, build)
Locked = TypeVar("Locked", str, tuple[str, str])

KINDS = ("added", "removed", "upgraded", "downgraded", "rebuilt")


@dataclass(frozen=True, slots=True)
class PackageChange:
    name: str
    side: str  # "pip" | "conda"
    kind: str  # one of KINDS
    old: str | None
    new: str | None

    @property
    def cuda_stack(self) -> bool:
        return in_cuda_stack(self.name, self.side)

    def text(self) -> str:
        if self.kind == "added":
            return f"{self.name} {self.new}"
        if self.kind == "removed":
            return f"{self.name} {self.old}"
        return f"{self.name} {self.old} -> {self.new}"


@dataclass(frozen=True, slots=True)
class FactChange:
    fact: str  # "CUDA", "driver floor", "GPU architectures", "cuDNN major"
    old: str | None
    new: str | None
    gained: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()

    def text(self) -> str:
        if self.gained or self.lost:
            parts = [
                f"+{' +'.join(self.gained)}" if self.gained else "",
                f"-{' -'.join(self.lost)}" if self.lost else "",
            ]
            return f"{self.fact} {' '.join(p for p in parts if p)}"
        return f"{self.fact} {self.old or 'none'} -> {self.new or 'none'}"


@dataclass(frozen=True, slots=True)
class StackFacts:
    """The CUDA facts of one view that a change report compares (None: the lock does not say)."""

    cuda: str | None = None
    driver_floor: str | None = None
    archs: tuple[str, ...] = ()  # of the torch build
    cudnn_major: str | None = None


@dataclass(frozen=True, slots=True)
class PlatformChanges:
    platform: str
    packages: tuple[PackageChange, ...] = ()
    facts: tuple[FactChange, ...] = ()
    new_lock: bool = False  # there was no lock before: every package is added
    # the lock files of this platform whose bytes a relock changes although no package moved
    # (a hand edit reverted, a header rewritten): never reported as "unchanged"
    rewritten: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        return not self.packages and not self.facts and not self.rewritten

    def counts(self) -> dict[str, int]:
        return {kind: n for kind in KINDS if (n := sum(1 for c in self.packages if c.kind == kind))}

    @property
    def cuda_stack(self) -> tuple[PackageChange, ...]:
        return tuple(c for c in self.packages if c.cuda_stack)

    @property
    def other(self) -> tuple[PackageChange, ...]:
        return tuple(c for c in self.packages if not c.cuda_stack)


@dataclass(frozen=True, slots=True)
class EditedPin:
    """One pin a hand edit changed: what lockguard wrote (None: the edit added it) and what the
    file says (None: the edit removed it)."""

    side: str  # "pip" | "conda"
    platform: str
    name: str
    wrote: str | None
    edited: str | None


@dataclass(frozen=True, slots=True)
class HandEdit:
    """A lock file whose body no longer matches its header's body hash, against what lockguard
    last wrote there (check/lock_origin.py finds that)."""

    file: str
    pins: tuple[EditedPin, ...] = ()
    # why its pins cannot be told apart (it no longer parses, lockguard's own pins are unknown)
    problem: str | None = None
    known: bool = True  # lockguard's own pins for it are known (False: resolved without them)


@dataclass(frozen=True, slots=True)
class SettledEdit:
    """A hand edit and what the relock made of it: each edited pin's version in the new lock."""

    edit: HandEdit
    now: tuple[str | None, ...] = ()  # per pin of edit.pins
    rewritten: bool = True  # the relock changes the file's bytes
    accepted: bool = False  # --accept-edits was given

    def text(self) -> str:
        edit = self.edit
        head = f"{edit.file} was edited by hand"
        if not self.rewritten:
            return f"{head}: left as it is (this resolve does not write it)"
        if not edit.known:
            return unknown_text([edit.file], self.accepted)
        if edit.problem:
            return f"{head} ({edit.problem}): rewritten from the lock's own pins"
        if not edit.pins:
            return f"{head} outside its pins: rewritten as lockguard writes it"
        reverted, adopted, other = [], [], []
        several = len({pin.platform for pin in edit.pins}) > 1  # conda-lock.yml: every platform
        for pin, now in zip(edit.pins, self.now, strict=True):
            if now == pin.wrote:
                reverted.append(_move(_pin_name(pin, several), pin.edited, pin.wrote))
            elif now == pin.edited:
                adopted.append(_move(_pin_name(pin, several), pin.wrote, pin.edited))
            else:
                other.append(
                    f"{_pin_name(pin, several)} edited to {_or(pin.edited)} (lockguard wrote "
                    f"{_or(pin.wrote)}): the new lock has {_or(now)}"
                )
        parts = []
        if reverted:
            why = "lockguard's pin kept" if self.accepted else "reverted to the lock's own pins"
            parts.append(f"{', '.join(reverted)} ({why})")
        if adopted:  # without --accept-edits only where the resolve chose the same by itself
            why = "adopted: --accept-edits" if self.accepted else "the resolve chose the same"
            parts.append(f"{', '.join(adopted)} ({why})")
        return f"{head}: {'; '.join(parts + other)}"


def unknown_text(files: list[str], accepted: bool) -> str:
    """Hand edits of every view that holds some pins: what lockguard wrote is not known."""
    how = (
        "their pins were the resolve's preferences (--accept-edits)"
        if accepted
        else "resolved without preferences from the edited files"
    )
    were = "was" if len(files) == 1 else "were"
    return (
        f"{', '.join(files)} {were} edited by hand and no unedited view holds the pins lockguard "
        f"wrote: {how}"
    )


def edit_lines(edits: tuple[SettledEdit, ...]) -> list[str]:
    """One line per hand edit; the edits whose own pins are unknown together in one."""
    lines = [e.text() for e in edits if e.edit.known or not e.rewritten]
    unknown = [e for e in edits if not e.edit.known and e.rewritten]
    if unknown:
        lines.append(unknown_text([e.edit.file for e in unknown], unknown[0].accepted))
    return lines


def _move(name: str, old: str | None, new: str | None) -> str:
    """A pin's change on disk: `name old -> new`, `name new added`, `name old removed`."""
    if old is None:
        return f"{name} {new} added"
    if new is None:
        return f"{name} {old} removed"
    return f"{name} {old} -> {new}"


def _pin_name(pin: EditedPin, several: bool) -> str:
    name = f"{pin.name} (conda)" if pin.side == "conda" else pin.name
    return f"{name} ({pin.platform})" if several else name


def _or(value: str | None) -> str:
    return value if value is not None else "(none)"


@dataclass(frozen=True, slots=True)
class ChangeReport:
    platforms: tuple[PlatformChanges, ...] = ()
    edits: tuple[SettledEdit, ...] = ()  # hand edits the relock reverted or adopted

    @property
    def unchanged(self) -> bool:
        return all(p.unchanged for p in self.platforms) and not self.edits


def compare(
    old: LockView | None, new: LockView | None, knowledge: Knowledge | None
) -> PlatformChanges:
    """The changes from `old` to `new` (either may be None: no lock on that side)."""
    either = new or old
    platform = either.platform if either is not None else ""
    before = old or LockView(platform)
    after = new or LockView(platform)
    changes = _side("pip", before.pip, after.pip, lambda v: v)
    changes += _side("conda", before.conda, after.conda, lambda v: v[0], builds=True)
    changes.sort(key=lambda c: (not c.cuda_stack, c.side, c.name))
    facts = _facts(before, after, knowledge) if knowledge is not None else ()
    return PlatformChanges(
        platform, tuple(changes), facts, new_lock=old is None and new is not None
    )


def _side(
    side: str,
    old: Mapping[str, Locked],
    new: Mapping[str, Locked],
    version_of: Callable[[Locked], str],
    builds: bool = False,
) -> list[PackageChange]:
    out = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            out.append(PackageChange(name, side, "removed", _shown(old[name]), None))
        elif name not in old:
            out.append(PackageChange(name, side, "added", None, _shown(new[name])))
        elif old[name] != new[name]:
            order = compare_versions(version_of(old[name]), version_of(new[name]))
            kind = (
                "upgraded"
                if order < 0
                else "downgraded"
                if order > 0
                else "rebuilt"
                if builds
                else None
            )
            if kind:
                out.append(PackageChange(name, side, kind, _shown(old[name]), _shown(new[name])))
    return out


def _shown(value: str | tuple[str, str]) -> str:
    return "=".join(value) if isinstance(value, tuple) else value


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1: PEP 440 where both parse, else conda-style (numbers as numbers, then text)."""
    try:
        left, right = Version(a), Version(b)
    except InvalidVersion:
        loose_left, loose_right = _loose(a), _loose(b)
        return (loose_left > loose_right) - (loose_left < loose_right)
    return (left > right) - (left < right)


def _loose(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p)
        for p in re.findall(r"\d+|[a-z]+", text.lower())
    )


def _facts(old: LockView, new: LockView, knowledge: Knowledge) -> tuple[FactChange, ...]:
    before, after = stack_facts(old, knowledge), stack_facts(new, knowledge)
    out = []
    for fact, old_value, new_value in (
        ("CUDA", before.cuda, after.cuda),
        ("driver floor", before.driver_floor, after.driver_floor),
        ("cuDNN major", before.cudnn_major, after.cudnn_major),
    ):
        if old_value != new_value:
            out.append(FactChange(fact, old_value, new_value))
    archs_before, archs_after = before.archs, after.archs
    if archs_before != archs_after and (archs_before or archs_after):
        out.append(
            FactChange(
                "GPU architectures",
                " ".join(archs_before) or None,
                " ".join(archs_after) or None,
                gained=tuple(a for a in archs_after if a not in archs_before),
                lost=tuple(a for a in archs_before if a not in archs_after),
            )
        )
    return tuple(out)


def stack_facts(view: LockView, knowledge: Knowledge) -> StackFacts:
    """CUDA (torch's build, else the conda side's), driver floor, GPU architectures, cuDNN major."""
    facts = facts_of(
        view.platform, dict(view.pip), {n: v[0] for n, v in view.conda.items()}, knowledge
    )
    cuda_text = driver_floor = None
    cuda = facts.torch_cuda or facts.conda_cuda()
    if cuda is not None:
        cuda_text = str(cuda)
        toolkit = knowledge.toolkit(cuda)
        if toolkit is not None:
            driver_floor = str(toolkit.min_driver)
    elif facts.torch_variant == "cpu":
        cuda_text = "none (CPU build)"
    archs: tuple[str, ...] = ()
    if facts.torch and facts.torch_variant and facts.torch_variant != "cpu":
        row = knowledge.arch_row(facts.torch_variant, facts.torch, view.platform)
        if row is not None:
            archs = tuple(str(a) for a in row.archs)
    cudnn = next((v for n, v in sorted(view.pip.items()) if n.startswith("nvidia-cudnn-cu")), None)
    cudnn = cudnn or (view.conda["cudnn"][0] if "cudnn" in view.conda else None)
    return StackFacts(cuda_text, driver_floor, archs, cudnn.split(".")[0] if cudnn else None)


def report(
    pairs: list[tuple[LockView | None, LockView | None]], knowledge: Knowledge | None
) -> ChangeReport:
    return ChangeReport(tuple(compare(old, new, knowledge) for old, new in pairs))
