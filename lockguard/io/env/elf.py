"""The one adapter around pyelftools: the SONAME of a shared library (None when not ELF)."""

from __future__ import annotations

import os
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

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
            elf = ELFFile(handle)
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == "DT_SONAME":
                            # DynamicTag sets .soname with setattr for a DT_SONAME tag:
                            # its annotations cannot say so
                            return tag.soname  # type: ignore[attr-defined]
    except (OSError, ELFError, ValueError, EOFError):
        return None
    return None
