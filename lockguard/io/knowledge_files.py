"""The knowledge files on disk: `LOCKGUARD_CONSTRAINTS`, else the constraints/ shipped with
lockguard, each of knowledge/loader.py's FILES read and handed to it. A loaded folder is kept for
the run (the same folder and options give the same knowledge)."""

from __future__ import annotations

import os
from functools import lru_cache

from lockguard.errors import InputError
from lockguard.io.path_text import plain
from lockguard.io.read import MIB, read_text
from lockguard.knowledge.loader import knowledge_from_files
from lockguard.knowledge.tables import Knowledge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the check path avoids it)
if TYPE_CHECKING:
    from pathlib import Path

ENV_DIR = "LOCKGUARD_CONSTRAINTS"
KNOWLEDGE_LIMIT = 16 * MIB  # the shipped files are a few hundred KiB together


def default_dir() -> Path:
    """`LOCKGUARD_CONSTRAINTS`, else the constraints shipped with lockguard."""
    from pathlib import Path

    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    return Path(_shipped_dir())


def _shipped_dir() -> str:
    import lockguard.constraints as shipped  # its folder (importlib.resources costs 10 ms to import)

    return os.path.dirname(shipped.__file__)


def _folder_text(directory: Path | str | None) -> str:
    """str(Path(directory) if directory else default_dir()), without pathlib for the shipped
    folder (the check path): its name is already in pathlib's spelling (io/path_text.py)."""
    if not directory and not os.environ.get(ENV_DIR):
        shipped = _shipped_dir()
        if plain(shipped):
            return shipped
    from pathlib import Path

    return str(Path(directory) if directory else default_dir())


def load_knowledge(directory: Path | None = None, *, validate: bool = True, memo=None) -> Knowledge:
    """`validate=False` (the fast check path) skips the costly checks of `deep` fields (PEP 508
    parsing of torch's Requires-Dist); the shipped files are validated by the test suite.
    `memo(kind, text, parse)` may return a parse of the same text made earlier
    (io/project/parse_memo.py): the rows are checked against the schema either way."""
    return _load(_folder_text(directory), validate, memo)


@lru_cache(maxsize=4)
def _load(directory: str, validate: bool, memo) -> Knowledge:
    def read(name: str) -> tuple[Path | str, str]:
        path = os.path.join(directory, name) if plain(directory) else _path(directory) / name
        return path, _read(path)

    return knowledge_from_files(read, validate, memo)


def _path(directory: str) -> Path:
    from pathlib import Path

    return Path(directory)


def _read(path: Path | str) -> str:
    """`path`: a Path, or a plain text (io/path_text.py) that messages print the same."""
    try:
        return read_text(path, what="knowledge file", limit=KNOWLEDGE_LIMIT)
    except FileNotFoundError:
        raise InputError(f"knowledge file {path} is missing", file=str(path),
                         hint="reinstall lockguard, or point LOCKGUARD_CONSTRAINTS at a full constraints/ folder") from None
