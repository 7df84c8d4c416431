"""`lockguard diff`: what changed between two locks, for review (the CUDA stack first).

    lockguard diff OLD NEW              two lock files of one kind (requirements.lock, environment.yml,
                                        conda-lock.yml, pylock.toml)
    lockguard diff --git REV [FILE]     the project's lock files (or FILE) at REV against the working tree
    lockguard diff                      the same as --git HEAD

Exit 0 when nothing changed, 1 when something did (as diff(1) does), 2 for bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from lockguard.cli.common import get_ui, intent_option, json_flag, load_project_intent
from lockguard.errors import InputError


@click.command()
@click.argument("old", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.argument("new", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--git", "revision", default=None, metavar="REV",
              help="Compare the lock files at this git revision with the working tree (default HEAD without OLD NEW).")
@intent_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="markdown: a table a CI job can post on a pull request.")
@json_flag
@click.pass_context
def diff(ctx, old, new, revision, intent_path, fmt) -> int:
    """What changed between two locks: added, removed, upgraded, downgraded, and the CUDA facts."""
    from lockguard.check.changes_render import markdown, text_lines, to_data
    from lockguard.check.lock_changes import report

    ui = get_ui(ctx, "diff")
    ui.json_mode = ui.json_mode or fmt == "json"
    if old is not None and new is not None:
        if revision is not None:
            raise InputError("give two lock files, or --git REV (with at most one file), not both",
                             hint="lockguard diff OLD NEW, or lockguard diff --git HEAD")
        pairs, title = _files(old, new), f"Lock changes: {old} -> {new}"
    elif old is not None and revision is None:
        raise InputError("one lock file is not enough to compare", hint="lockguard diff OLD NEW, or lockguard diff "
                         f"--git HEAD {old}")
    else:
        revision = revision or "HEAD"
        pairs, title = _git(revision, old, intent_path, ui), f"Lock changes since {revision}"
    from lockguard.io.project.parse_memo import default_memo
    from lockguard.knowledge import load_knowledge

    changes = report(pairs, load_knowledge(memo=default_memo()))
    code = 0 if changes.unchanged else 1
    if fmt == "json":
        ui.emit_json(to_data(changes), ok=True, exit_code=code)
    elif fmt == "markdown":
        ui.out(markdown(changes, title=title).rstrip("\n"))
    else:
        for line in text_lines(changes, list_new=True):
            ui.out(line)
    return code


def _read(path: Path, label: str | None = None) -> str:
    from lockguard.io.project.project_files import read_lock_text

    text = read_lock_text(path)
    if text is None:
        raise InputError(f"{label or path} does not exist", file=str(path))
    return text


def _views(kind: str, text: str, label: str, platform: str | None = None) -> dict:
    from lockguard.check.lock_views import views_of
    from lockguard.lockfiles.syntax import LockSyntaxError

    try:
        return views_of(kind, text, platform)
    except LockSyntaxError as exc:
        raise InputError(f"{label}" + (f":{exc.line}" if exc.line else "") + f": {exc.message}", file=label,
                         line=exc.line, hint="lockguard diff reads the lock files lockguard writes") from None


def _files(old: Path, new: Path) -> list:
    from lockguard.check.lock_changes import LockView
    from lockguard.check.lock_views import kind_of

    old_text, new_text = _read(old), _read(new)
    kind = kind_of(old.name, old_text)
    if kind_of(new.name, new_text) != kind:
        raise InputError(f"{old} is a {kind} file and {new} a {kind_of(new.name, new_text)} file: they cannot be "
                         "compared", hint="compare two lock files of one kind")
    before, after = _views(kind, old_text, str(old)), _views(kind, new_text, str(new))
    if kind != "conda-lock" and len(before) == 1 and len(after) == 1:  # one platform each: compare them
        platform = next(iter(after))
        view = next(iter(before.values()))
        before = {platform: LockView(platform, view.pip, view.conda)}
    return [(before.get(p), after.get(p)) for p in sorted(set(before) | set(after))]


def _git(revision: str, file: Path | None, intent_path: Path | None, ui) -> list:
    from lockguard.check.lock_views import kind_of, merged
    from lockguard.io.project.git_files import check_revision, text_at

    if file is not None:
        root = file.resolve().parent
        check_revision(root, revision)
        new_text = _read(file) if file.exists() else None
        old_text = text_at(root, revision, file.name)
        if old_text is None and new_text is None:
            raise InputError(f"{file} exists neither at {revision} nor in the working tree", file=str(file))
        kind = kind_of(file.name, new_text or old_text or "")
        before = _views(kind, old_text, f"{file} at {revision}") if old_text is not None else {}
        after = _views(kind, new_text, str(file)) if new_text is not None else {}
        return [(before.get(p), after.get(p)) for p in sorted(set(before) | set(after))]
    from lockguard.model.lock_paths import lock_paths

    intent = load_project_intent(intent_path, validate_conda=False, ui=ui)
    root = intent.source.root
    check_revision(root, revision)
    before_parts, after_parts = [], []
    for relative, kind, platform in lock_paths(intent):
        if kind not in ("requirements", "environment"):
            continue  # conda-lock.yml and pylock.toml say the same again
        old_text = text_at(root, revision, relative)
        new_text = _read(root / relative) if (root / relative).exists() else None
        if old_text is not None:
            before_parts.append(_views(kind, old_text, f"{relative} at {revision}", platform))
        if new_text is not None:
            after_parts.append(_views(kind, new_text, relative, platform))
    before, after = merged(*before_parts), merged(*after_parts)
    return [(before.get(p), after.get(p)) for p in intent.platforms if p in before or p in after]
