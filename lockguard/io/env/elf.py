"""The one adapter around pyelftools: the SONAME of a shared library (None when not ELF)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from lockguard.errors import InputError
from lockguard.io.read import open_regular

_ELF_LIMIT = 8 << 30  # larger than any real library: a bound, not a policy


def soname(path: Path) -> str | None:
    """Never blocks: a FIFO or device with a library's name is not ELF."""
    try:
        fd = open_regular(path, _ELF_LIMIT)
    except (OSError, InputError):
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if handle.read(4) != b"\x7fELF":
                return None
            handle.seek(0)
            return _dynamic_soname(handle)
    except (OSError, ValueError, EOFError):
        return None


def _dynamic_soname(handle: BinaryIO) -> str | None:
    # pyelftools only for a real ELF file: an inventory whose SONAMEs all come from the scan
    # memo, or whose *.so* files are not ELF, never pays its import (~15 ms of a scan's CPU)
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        for section in ELFFile(handle).iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag == "DT_SONAME":
                        # DynamicTag sets .soname with setattr for a DT_SONAME tag:
                        # its annotations cannot say so
                        return tag.soname  # type: ignore[attr-defined]
    except ELFError:
        return None
    return None
