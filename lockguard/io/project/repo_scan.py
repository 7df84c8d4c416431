"""Find the repository files that can contradict a lock (standard library only: the cached check
path uses it before anything else is imported)."""

from __future__ import annotations

import os

SKIP_DIRS = {
    ".git",
    ".hg",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    ".nox",
    "build",
    "dist",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".lockguard",
    "site-packages",
}
MAX_DEPTH = 4


def wanted(name: str) -> bool:
    lower = name.lower()
    return (
        (name.startswith("requirements") and name.endswith((".txt", ".in")))
        or "dockerfile" in lower
        or name in ("pyproject.toml", "setup.cfg")
    )


def repository_paths(root: str | os.PathLike[str]) -> list[str]:
    """Relative paths of requirements*.txt/.in, Dockerfiles, pyproject.toml and setup.cfg files."""
    found: list[str] = []

    def walk(folder: str, depth: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if (
                        depth < MAX_DEPTH
                        and entry.name not in SKIP_DIRS
                        and not entry.name.startswith(".")
                    ):
                        walk(entry.path, depth + 1)
                elif wanted(entry.name) and entry.is_file():
                    found.append(os.path.relpath(entry.path, root))
            except OSError:
                continue  # a symlink loop, a vanished file: nothing that pins anything

    walk(str(root), 0)
    return sorted(found)
