"""The knowledge files on disk: `LOCKGUARD_CONSTRAINTS`, else the constraints/ shipped with
lockguard, each of knowledge/loader.py's FILES read and handed to it, with their parse kept in the
cache between runs (io/knowledge/cache.py). A loaded folder is kept for the run (the same folder
and options give the same knowledge)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.knowledge.cache import KnowledgeParses
from lockguard.io.read import MIB, read_text
from lockguard.knowledge.loader import FILES, knowledge_from_files
from lockguard.knowledge.tables import Knowledge

ENV_DIR = "LOCKGUARD_CONSTRAINTS"
KNOWLEDGE_LIMIT = 16 * MIB  # the shipped files are a few hundred KiB together


def default_dir() -> Path:
    """`LOCKGUARD_CONSTRAINTS`, else the constraints shipped with lockguard."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    return Path(_shipped_dir())


def _shipped_dir() -> str:
    # its folder (importlib.resources costs 10 ms to import)
    import lockguard.constraints as shipped

    return os.path.dirname(shipped.__file__)


def load_knowledge(directory: Path | None = None, *, validate: bool = True) -> Knowledge:
    """`validate=False` (the fast check path) skips the costly checks of `deep` fields (PEP 508
    parsing of torch's Requires-Dist); the shipped files are validated by the test suite."""
    return _load(Path(directory) if directory else default_dir(), validate)


@lru_cache(maxsize=4)
def _load(directory: Path, validate: bool) -> Knowledge:
    texts = {name: _read(directory / name) for name in FILES}

    def read(name: str) -> tuple[Path, str]:
        return directory / name, texts[name]

    parses = KnowledgeParses(texts)
    knowledge = knowledge_from_files(read, validate, parses.parse)
    parses.save()  # only a parse of files that made valid knowledge is kept
    return knowledge


def _read(path: Path) -> str:
    try:
        return read_text(path, what="knowledge file", limit=KNOWLEDGE_LIMIT)
    except FileNotFoundError:
        raise InputError(
            f"knowledge file {path} is missing",
            file=str(path),
            hint="reinstall lockguard, "
            "or point LOCKGUARD_CONSTRAINTS at a full constraints/ folder",
        ) from None
