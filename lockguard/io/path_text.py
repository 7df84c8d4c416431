"""Paths as text, for the check path: pathlib (with the urllib.parse and ipaddress it imports)
costs a fifth of a Python start-up, on every commit.

os.path and pathlib agree on a path that is already in pathlib's spelling (`plain`): absolute,
no `.` part, no repeated or trailing slash. The helpers here take such a text (or a Path) and
answer what pathlib would; anything else is handed to pathlib itself, so the answer never differs.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the check path avoids it)
if TYPE_CHECKING:
    from pathlib import Path


def plain(text: str) -> bool:
    """Whether str(Path(text)) == text and os.path reads it as pathlib does (POSIX only)."""
    return (os.sep == "/" and text.startswith("/") and not text.startswith("//") and "//" not in text
            and "/./" not in text and not text.endswith(("/", "/.")) and "\0" not in text)


def name_of(path: str | Path) -> str:
    """Path.name of a Path or of a plain text."""
    return os.path.basename(path) if isinstance(path, str) else path.name


def resolved(path: str | Path) -> str:
    """str(Path(path).resolve()): os.path.realpath for a plain text whose target can be stat'ed
    (what Path.resolve does then); pathlib for anything else (its symlink-loop error included)."""
    if isinstance(path, str) and plain(path):
        target = os.path.realpath(path)
        try:
            os.stat(target)
        except (OSError, ValueError):
            pass
        else:
            if plain(target):
                return target
    from pathlib import Path

    return str(Path(path).resolve())


def exists_or_link(path: str) -> bool:
    """Path(path).exists() or Path(path).is_symlink(), for a plain text: os.stat/os.lstat when
    they answer plainly (found, or not there at all); pathlib for any other error, which it
    raises or ignores by its own rules."""
    try:
        os.stat(path)
        return True
    except FileNotFoundError:
        try:
            os.lstat(path)
        except FileNotFoundError:
            return False
        except (OSError, ValueError):
            pass
    except (OSError, ValueError):
        pass
    from pathlib import Path

    return Path(path).exists() or Path(path).is_symlink()
