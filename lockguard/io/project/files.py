"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes) -> None:
    write_all_atomic({Path(path): data})


def write_all_atomic(files: dict[Path, str | bytes]) -> None:
    """Write several files so that a failure while preparing leaves every one untouched.

    Each file is staged next to its target (same file system) and fsynced; only when all are
    staged are they renamed into place. An existing file's permissions are kept.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
    finally:
        for tmp, _path in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
