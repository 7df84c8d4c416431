"""The one adapter around pyelftools: the SONAME of a shared library (None when not ELF)."""

from __future__ import annotations

from pathlib import Path


def soname(path: Path) -> str | None:
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as handle:
            if handle.read(4) != b"\x7fELF":
                return None
            handle.seek(0)
            elf = ELFFile(handle)
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == "DT_SONAME":
                            return tag.soname
    except (OSError, ELFError, ValueError):
        return None
    return None
