"""`lockguard diff`'s session: the two sides of a comparison read (two lock files, or the project's
lock files at a git revision against the working tree) as per-platform views, and the change
report between them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lockguard.app.project import load_one_intent
from lockguard.check.lock_changes import ChangeReport, report
from lockguard.check.lock_views import merged, views_of
from lockguard.errors import InputError
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.project.git_files import check_revision, text_at
from lockguard.io.project.intent_file import source_of
from lockguard.io.read import read_lock_text
from lockguard.lockfiles.formats import format_of, kind_of
from lockguard.lockfiles.lock_view import LockView
from lockguard.lockfiles.syntax import LockSyntaxError
from lockguard.model.lock_paths import lock_paths
from lockguard.model.wording import a_or_an


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOutcome:
    """The change report between the two sides, and the title a markdown table carries."""

    changes: ChangeReport
    title: str

    @property
    def exit_code(self) -> int:
        """0 when nothing changed, 1 when something did (as diff(1) does)."""
        return 0 if self.changes.unchanged else 1


def diff(
    old: Path | None,
    new: Path | None,
    *,
    revision: str | None = None,
    intent_path: Path | None = None,
    warn: Callable[[str], None] | None = None,
    profile: str | None = None,
) -> DiffOutcome:
    """`lockguard diff`'s sequence: two lock files of one kind (OLD NEW), or the project's lock
    files (or OLD alone) at `revision` (default HEAD) against the working tree; exit 2 for a
    combination that names no comparison."""
    if old is not None and new is not None:
        if revision is not None:
            raise InputError(
                "give two lock files, or --git REV (with at most one file), not both",
                hint="lockguard diff OLD NEW, or lockguard diff --git HEAD",
            )
        pairs, title = files_pairs(old, new), f"Lock changes: {old} -> {new}"
    elif old is not None and revision is None:
        raise InputError(
            "one lock file is not enough to compare",
            hint=f"lockguard diff OLD NEW, or lockguard diff --git HEAD {old}",
        )
    else:
        revision = revision or "HEAD"
        pairs = revision_pairs(revision, old, intent_path, warn=warn, profile=profile)
        title = f"Lock changes since {revision}"
    return DiffOutcome(changes=changes_between(pairs), title=title)


def changes_between(pairs: list) -> ChangeReport:
    """The change report of (before, after) views, with the knowledge's CUDA facts."""
    return report(pairs, load_knowledge())


def _read(path: Path, label: str | None = None) -> str:
    text = read_lock_text(path)
    if text is None:
        raise InputError(f"{label or path} does not exist", file=str(path))
    if "\r" in text.replace("\r\n", ""):  # read as one line, it would be an empty lock
        raise InputError(
            f"{label or path} ends its lines with a bare carriage return (CR), which lockguard "
            "never writes",
            file=str(path),
            hint="convert the line ends to LF (e.g. `tr '\\r' '\\n'`), or run `lockguard resolve`",
        )
    return text


def _views(kind: str, text: str, label: str, platform: str | None = None) -> dict:
    try:
        return views_of(kind, text, platform)
    except LockSyntaxError as exc:
        raise InputError(
            f"{label}" + (f":{exc.line}" if exc.line else "") + f": {exc.message}",
            file=label,
            line=exc.line,
            hint="lockguard diff reads the lock files lockguard writes",
        ) from None


def files_pairs(old: Path, new: Path) -> list:
    old_text, new_text = _read(old), _read(new)
    kind = kind_of(old.name, old_text)
    if kind_of(new.name, new_text) != kind:
        raise InputError(
            f"{old} is {a_or_an(kind)} file and {new} {a_or_an(kind_of(new.name, new_text))} "
            "file: they "
            "cannot be compared",
            hint="compare two lock files of one kind",
        )
    before, after = _views(kind, old_text, str(old)), _views(kind, new_text, str(new))
    # one platform each: compare them
    if format_of(kind).per_platform and len(before) == 1 and len(after) == 1:
        platform = next(iter(after))
        view = next(iter(before.values()))
        before = {platform: LockView(platform, view.pip, view.conda)}
    return [(before.get(p), after.get(p)) for p in sorted(set(before) | set(after))]


def revision_pairs(
    revision: str, file: Path | None, intent_path: Path | None, *, warn=None, profile=None
) -> list:
    if file is not None:
        root = file.resolve().parent
        check_revision(root, revision)
        new_text = _read(file) if file.exists() else None
        old_text = text_at(root, revision, file.name)
        if old_text is None and new_text is None:
            raise InputError(
                f"{file} exists neither at {revision} nor in the working tree", file=str(file)
            )
        kind = kind_of(file.name, new_text or old_text or "")
        before = _views(kind, old_text, f"{file} at {revision}") if old_text is not None else {}
        after = _views(kind, new_text, str(file)) if new_text is not None else {}
        return [(before.get(p), after.get(p)) for p in sorted(set(before) | set(after))]
    intent = load_one_intent(intent_path, profile, validate_conda=False, warn=warn)
    root = source_of(intent).root
    check_revision(root, revision)
    before_parts, after_parts = [], []
    for relative, kind, platform in lock_paths(intent):
        if not format_of(kind).primary:
            continue  # conda-lock.yml and pylock.toml say the same again
        old_text = text_at(root, revision, relative)
        new_text = _read(root / relative) if (root / relative).exists() else None
        if old_text is not None:
            before_parts.append(_views(kind, old_text, f"{relative} at {revision}", platform))
        if new_text is not None:
            after_parts.append(_views(kind, new_text, relative, platform))
    before, after = merged(*before_parts), merged(*after_parts)
    return [(before.get(p), after.get(p)) for p in intent.platforms if p in before or p in after]
