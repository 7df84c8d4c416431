"""What lockguard last wrote into a project's lock files, told apart from what is on disk now.

A lock file whose body no longer matches its header's body hash was changed after lockguard wrote
it (DESIGN.md, "lockguard's own state"): its pins are not a preference source, or `check` would
flag the edit (LG102) and the documented fix, `lockguard resolve`, would launder it into every
view. What lockguard wrote there comes, first found first used, from:
- the file itself, when its body hash holds;
- lockguard's own copy of what it wrote (io/project/written.py, kept on the machine that wrote
  it), found by the body hash the edited file's header still carries;
- another view of the same resolution that was not edited (environment.yml's pip: section,
  pylock.toml and conda-lock.yml hold requirements.lock's pins; environment.yml holds
  conda-lock.yml's conda records), taken only where its pins hash to the digest the edited file's
  header recorded (`lockguard-pins`): a re-sealed edit of that view is not lockguard's.
When none of them has the pins, they are unknown and the caller says so. Pure: the caller reads
the files and lockguard's copies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lockguard.check.lock_changes import EditedPin, HandEdit
from lockguard.check.lock_views import views_of
from lockguard.lockfiles.formats import (
    BY_PIP_RANK,
    CONDA_LOCK,
    ENVIRONMENT,
    REQUIREMENTS,
    format_of,
)
from lockguard.lockfiles.headers import is_sealed_intact, pins_digest_of, read_header
from lockguard.lockfiles.lock_view import LockView
from lockguard.lockfiles.syntax import LockSyntaxError, clip

# the order in which the views of one platform's pip pins are asked, and in which the edits of
# several files to the same pin are adopted (--accept-edits): requirements.lock first
PIP_VIEWS = tuple(f.kind for f in BY_PIP_RANK)


@dataclass(frozen=True, slots=True)
class LockFileText:
    relative: str
    kind: str
    platform: str | None  # None: conda-lock.yml (every platform)
    text: str | None  # on disk (None: missing or unreadable)
    copy: str | None = None  # lockguard's copy of what it last wrote here (None: not here)

    @property
    def edited(self) -> bool:
        """Changed since lockguard wrote it: the body hash does not hold (or there is none)."""
        return self.text is not None and not is_sealed_intact(self.text)

    @property
    def written(self) -> str | None:
        """What lockguard last wrote here, where known."""
        return self.copy if self.edited else self.text


@dataclass(frozen=True, slots=True)
class LockOrigin:
    """lockguard's last lock, per platform, as far as the files tell, and the hand edits."""

    pip: Mapping[str, Mapping[str, str]]  # platform -> the pip pins lockguard wrote
    pip_from: Mapping[str, str]  # platform -> the view they were read from, when not its own
    conda: Mapping[str, Mapping[str, tuple[str, str]]]  # platform -> conda (version, build)
    conda_from: str | None  # the view conda-lock.yml's records were read from (not its own)
    unknown: tuple[str, ...]  # platforms whose pip pins lockguard wrote are unknown
    conda_unknown: bool  # conda-lock.yml was edited and no view holds its records
    edits: tuple[HandEdit, ...] = ()
    edited_views: Mapping[str, Mapping[str, LockView]] = field(default_factory=dict)
    copies: Mapping[str, str] = field(default_factory=dict)  # file -> lockguard's copy (edited)

    def view(self, platform: str) -> LockView | None:
        """lockguard's last lock on `platform` (None: its pip pins are not known)."""
        if platform not in self.pip:
            return None
        return LockView(platform, self.pip[platform], self.conda.get(platform, {}))

    def adopted(self, platform: str, side: str) -> list[tuple[str, str | None, str]]:
        """(name, edited version or None for a removed pin, file) of every pin the hand edits
        changed on `platform`'s `side`; the first file (requirements.lock first) wins a pin two
        files edited differently."""
        out: dict[str, tuple[str, str | None, str]] = {}
        for edit in self.edits:
            for pin in edit.pins:
                if pin.platform == platform and pin.side == side and pin.name not in out:
                    out[pin.name] = (pin.name, pin.edited, edit.file)
        return list(out.values())


def origin_of(files: Sequence[LockFileText], platforms: Sequence[str]) -> LockOrigin:
    by_kind = {(f.kind, f.platform): f for f in files}
    conda_lock = by_kind.get((CONDA_LOCK.kind, None))
    pip: dict[str, dict[str, str]] = {}
    pip_from: dict[str, str] = {}
    unknown: list[str] = []
    for platform in platforms:
        requirements = by_kind.get((REQUIREMENTS.kind, platform))
        if requirements is None or requirements.text is None:
            continue  # no lock there: nothing was written, nothing was edited
        own = _view(requirements.kind, requirements.written, platform)
        if own is not None:
            pip[platform] = dict(own.pip)
            continue
        if not requirements.edited:
            continue  # lockguard's, but unreadable or another platform's: prior_lock says so
        found = _sibling_pins(requirements, platform, by_kind)
        if found is None:
            unknown.append(platform)
        else:
            pip[platform], pip_from[platform] = found
    conda, conda_from, conda_unknown = _conda(conda_lock, platforms, by_kind, pip)
    origin = LockOrigin(pip, pip_from, conda, conda_from, tuple(unknown), conda_unknown)
    edits, edited_views = _edits(files, origin)
    copies = {f.relative: f.copy for f in files if f.edited and f.copy is not None}
    return LockOrigin(
        pip, pip_from, conda, conda_from, tuple(unknown), conda_unknown, edits, edited_views, copies
    )


def _view(kind: str, text: str | None, platform: str | None) -> LockView | None:
    if text is None:
        return None
    try:
        views = views_of(kind, text, platform)
    except LockSyntaxError:
        return None
    return views.get(platform) if platform else None


def _sibling_pins(
    requirements: LockFileText,
    platform: str,
    by_kind: Mapping[tuple[str, str | None], LockFileText],
) -> tuple[dict[str, str], str] | None:
    """requirements.lock's pins from a view lockguard wrote with it: its pins must hash to the
    digest requirements.lock's header recorded (or, in a file that records none, the view must
    be of the same intent)."""
    header = read_header(requirements.text or "")
    for kind in PIP_VIEWS[1:]:
        sibling = by_kind.get((kind, platform if format_of(kind).per_platform else None))
        if sibling is None or sibling.written is None:
            continue
        try:
            view = views_of(kind, sibling.written, platform).get(platform)
        except LockSyntaxError:
            continue
        if view is None:
            continue
        if header.pins_hash is not None:
            if _digest({name: version for name, version in view.pip.items()}) != header.pins_hash:
                continue
        elif read_header(sibling.written).intent_hash != header.intent_hash:
            continue
        return dict(view.pip), sibling.relative
    return None


def _conda(
    conda_lock: LockFileText | None,
    platforms: Sequence[str],
    by_kind: Mapping[tuple[str, str | None], LockFileText],
    pip: Mapping[str, Mapping[str, str]],
) -> tuple[dict[str, dict[str, tuple[str, str]]], str | None, bool]:
    """conda-lock.yml's conda records per platform (or, for a knowledge-only conda side, the
    specs environment.yml pinned), where source, whether they are unknown."""
    records: dict[str, dict[str, tuple[str, str]]] = {}
    source = None
    unknown = False
    if conda_lock is not None and conda_lock.text is not None:
        written = conda_lock.written
        if written is not None:
            try:
                records = {p: dict(v.conda) for p, v in views_of(CONDA_LOCK.kind, written).items()}
            except LockSyntaxError:
                records = {}
        elif conda_lock.edited and read_header(conda_lock.text or "").conda_solved:
            # (a knowledge-only conda-lock.yml holds no conda records: nothing to recover)
            found = _conda_from_environments(conda_lock, platforms, by_kind, pip)
            if found is None:
                unknown = True
            else:
                records, source = found
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for platform in platforms:
        if records.get(platform):
            out[platform] = records[platform]
            continue
        environment = by_kind.get((ENVIRONMENT.kind, platform))
        view = _view(ENVIRONMENT.kind, environment.written, platform) if environment else None
        if view is not None:
            out[platform] = dict(view.conda)  # knowledge-only specs (no builds), or no records
    return out, source, unknown


def _conda_from_environments(
    conda_lock: LockFileText,
    platforms: Sequence[str],
    by_kind: Mapping[tuple[str, str | None], LockFileText],
    pip: Mapping[str, Mapping[str, str]],
) -> tuple[dict[str, dict[str, tuple[str, str]]], str] | None:
    """An edited conda-lock.yml's records from the environment.yml files lockguard wrote with it
    (solved ones: they carry the builds), checked against conda-lock.yml's recorded digest,
    which covers the pip pins of every platform too."""
    header = read_header(conda_lock.text or "")
    records: dict[str, dict[str, tuple[str, str]]] = {}
    entries: dict[str, str] = {}
    sources = []
    for platform in platforms:
        environment = by_kind.get((ENVIRONMENT.kind, platform))
        if environment is None or environment.written is None or platform not in pip:
            return None
        if not read_header(environment.written).conda_solved:
            return None  # versions only: not the records conda-lock.yml held
        view = _view(ENVIRONMENT.kind, environment.written, platform)
        if view is None:
            return None
        records[platform] = dict(view.conda)
        sources.append(environment.relative)
        entries.update({f"pip {n} ({platform})": v for n, v in pip[platform].items()})
        entries.update({f"conda {n} ({platform})": f"{v}={b}" for n, (v, b) in view.conda.items()})
    if header.pins_hash is not None and _digest(entries) != header.pins_hash:
        return None
    return records, ", ".join(sources)


def _digest(pins: Mapping[str, str]) -> str:
    return pins_digest_of({key: (version, (), None) for key, version in pins.items()})


def _edits(
    files: Sequence[LockFileText], origin: LockOrigin
) -> tuple[tuple[HandEdit, ...], dict[str, dict[str, LockView]]]:
    """Each edited file against lockguard's last lock: the pins that differ, in the order in
    which their edits are adopted."""
    edits: list[HandEdit] = []
    views: dict[str, dict[str, LockView]] = {}
    edited = [f for f in files if f.edited]
    edited.sort(key=lambda f: PIP_VIEWS.index(f.kind) if f.kind in PIP_VIEWS else len(PIP_VIEWS))
    for lock in edited:
        mine = [lock.platform] if lock.platform else sorted(set(origin.pip) | set(origin.unknown))
        known = all(p not in origin.unknown for p in mine)
        try:
            found = views_of(lock.kind, lock.text or "", lock.platform)
        except LockSyntaxError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            problem = f"it no longer parses: {where}{clip(exc.message, 120)}"
            edits.append(HandEdit(lock.relative, problem=problem, known=known))
            continue
        views[lock.relative] = found
        pins: list[EditedPin] = []
        for platform, view in sorted(found.items()):
            before = origin.view(platform)
            if before is None:
                continue
            pins += _differ("pip", platform, before.pip, view.pip)
            # conda-lock.yml holds records (with builds) only: none for a knowledge-only side
            records = any(build for _version, build in before.conda.values())
            if before.conda and (format_of(lock.kind).lists_unsolved_conda or records):
                now = {n: _conda_text(v) for n, v in view.conda.items()}
                pins += _differ(
                    "conda", platform, {n: _conda_text(v) for n, v in before.conda.items()}, now
                )
        edits.append(HandEdit(lock.relative, tuple(pins), known=known))
    return tuple(edits), views


def _conda_text(record: tuple[str, str]) -> str:
    version, build = record
    return f"{version}={build}" if build else version


def _differ(
    side: str, platform: str, wrote: Mapping[str, str], edited: Mapping[str, str]
) -> list[EditedPin]:
    return [
        EditedPin(side, platform, name, wrote.get(name), edited.get(name))
        for name in sorted(set(wrote) | set(edited))
        if wrote.get(name) != edited.get(name)
    ]
