"""The helper script that reads what each reachable CUDA-stack library says about itself: its
SONAME (from the ELF dynamic section) and the integer its version call returns (the doctor probe's
ctypes code). Standard library only, run by path (`python -I library_probe.py FAMILY:PATH...`): a
library that crashes on load takes this process down, never doctor. One JSON line per library,
flushed as it goes, so what came before a crash survives.

The SONAME is read here rather than through pyelftools (io/env/elf.py): importing pyelftools costs
more than the rest of this helper, and doctor without torch has half a second in all.
"""

import importlib.util
import json
import os
import struct
import sys

PROBE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "doctor",
    "probe.py",
)
PT_LOAD, PT_DYNAMIC, DT_NULL, DT_STRTAB, DT_SONAME = 1, 2, 0, 5, 14


def elf_soname(path):
    """DT_SONAME of an ELF shared library (None when it has none, or is no ELF file)."""
    with open(path, "rb") as handle:
        head = handle.read(64)
        if (
            len(head) < 52
            or head[:4] != b"\x7fELF"
            or head[4] not in (1, 2)
            or head[5] not in (1, 2)
        ):
            return None
        wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
        if wide:
            (phoff,), (phentsize, phnum) = (
                struct.unpack(order + "Q", head[32:40]),
                struct.unpack(order + "HH", head[54:58]),
            )
        else:
            (phoff,), (phentsize, phnum) = (
                struct.unpack(order + "I", head[28:32]),
                struct.unpack(order + "HH", head[42:46]),
            )
        handle.seek(phoff)
        table = handle.read(phentsize * min(phnum, 4096))
        loads, dynamic = [], None
        for start in range(0, len(table) - phentsize + 1, phentsize):
            if wide:
                kind, _flags, offset, vaddr, _paddr, size = struct.unpack(
                    order + "IIQQQQ", table[start : start + 40]
                )
            else:
                kind, offset, vaddr, _paddr, size = struct.unpack(
                    order + "IIIII", table[start : start + 20]
                )
            if kind == PT_LOAD:
                loads.append((vaddr, offset, size))
            elif kind == PT_DYNAMIC:
                dynamic = (offset, size)
        if dynamic is None:
            return None
        handle.seek(dynamic[0])
        data = handle.read(min(dynamic[1], 1 << 20))
        entry, width = (order + "qQ", 16) if wide else (order + "iI", 8)
        strtab = soname = None
        for start in range(0, len(data) - width + 1, width):
            tag, value = struct.unpack(entry, data[start : start + width])
            if tag == DT_NULL:
                break
            if tag == DT_STRTAB:
                strtab = value
            elif tag == DT_SONAME:
                soname = value
        if strtab is None or soname is None:
            return None
        for vaddr, offset, size in loads:  # the string table's address, as a place in the file
            if vaddr <= strtab < vaddr + size:
                handle.seek(offset + strtab - vaddr + soname)
                return handle.read(256).split(b"\0", 1)[0].decode("utf-8", "replace") or None
    return None


def _version_code():
    # the doctor's probe holds the version calls (it reads the libraries torch mapped with them)
    spec = importlib.util.spec_from_file_location("lockguard_doctor_probe", PROBE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the doctor's probe from {PROBE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.version_code


def main(specs):
    version_code = _version_code()
    for spec in specs:
        family, _, path = spec.partition(":")
        line = {"path": path}
        try:
            line["soname"] = elf_soname(path)
        except (OSError, struct.error):
            line["soname"] = None
        try:
            line["code"] = version_code(family, path)
        except Exception as exc:  # a library without the call, or one that fails to load
            line["error"] = f"{type(exc).__name__}: {exc}"[:500]
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
