"""A file as it was at a git revision (`lockguard diff --git REV`), through the git program and the
one subprocess runner (io/run.py). Read-only: nothing in the repository changes."""

from __future__ import annotations

import os
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.read import LOCK_LIMIT
from lockguard.io.run import run_bounded

GIT_TIMEOUT = 60.0


def _git(root: Path, *args: str, cap: int = LOCK_LIMIT):
    found = run_bounded(["git", "-C", str(root), *args], timeout=GIT_TIMEOUT, what="git", cap=cap)
    if found.returncode is None:
        raise InputError(
            f"--git needs the git program: {found.problem}",
            hint="install git, or compare two files: lockguard diff OLD NEW",
        )
    if found.problem:
        raise InputError(f"git {' '.join(args)} in {root}: {found.problem}")
    return found


def check_revision(root: Path, revision: str) -> None:
    """Exit 2 unless `revision` names a commit of the repository that holds `root`."""
    if revision.startswith("-"):
        raise InputError(
            f"--git {revision!r} is not a revision", hint="e.g. --git HEAD or --git origin/main"
        )
    found = _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cap=4096)
    if found.returncode != 0:
        inside = _git(root, "rev-parse", "--is-inside-work-tree", cap=4096)
        if inside.returncode != 0:
            raise InputError(
                f"{root} is not inside a git repository",
                file=str(root),
                hint="--git compares with a revision of the repository; give two files instead",
            )
        raise InputError(
            f"--git {revision}: not a commit of the repository at {root}",
            hint="e.g. --git HEAD, --git HEAD~1 or --git origin/main",
        )


def text_at(root: Path, revision: str, relative: str) -> str | None:
    """The text of `relative` (a path under `root`) at `revision`; None when it did not exist."""
    spec = f"{revision}:./{relative}"
    if _git(root, "cat-file", "-e", spec, cap=4096).returncode != 0:
        return None
    found = _git(root, "cat-file", "blob", spec)
    if found.returncode != 0:
        raise InputError(
            f"git cannot read {relative} at {revision}: {found.stderr.strip()[:200]}", file=relative
        )
    if found.flooded:
        raise InputError(
            f"{relative} at {revision} is larger than a lock file can be", file=relative
        )
    return found.stdout


def annotation_root(start: Path) -> Path:
    """The folder GitHub resolves an annotation's `file=` against: GITHUB_WORKSPACE in Actions,
    else the repository's top level (the nearest folder above `start` holding `.git`), else
    `start`. In a monorepo the project is a folder below it (`working-directory: services/x`)."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and os.path.isdir(workspace):
        return Path(os.path.abspath(workspace))
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return start
