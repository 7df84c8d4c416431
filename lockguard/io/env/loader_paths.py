"""What the dynamic loader sees: the SONAMEs of CUDA-stack libraries that occur more than once in
the prefix, and the directories outside it that LD_LIBRARY_PATH and /etc/ld.so.conf.d put before
the wheels' own RPATHs. Reads only."""

from __future__ import annotations

import os
import re
from pathlib import Path

from lockguard.io.env.scan_memo import MISSING, Memo, file_key
from lockguard.io.read import read_env_text
from lockguard.model.prefix import LibraryDir, PrefixSnapshot

# The CUDA stack and torch, as library names: what the loader's path must not shadow.
_CUDA_STACK = (
    r"cudart|cudnn[a-z_]*|nccl|cublas(Lt)?|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink|"
    r"torch[a-z_]*|c10[a-z_]*"
)
CUDA_STACK_LIBS = re.compile(rf"^lib({_CUDA_STACK})\.so")
# Libraries whose duplicates break processes (loaded into one global namespace): the CUDA stack,
# torch, and the compiler runtimes. Their SONAMEs are read when a name occurs twice.
SONAME_MATTERS = re.compile(
    rf"^lib({_CUDA_STACK}|nvToolsExt|cupti|shm|gomp|iomp5|stdc\+\+|gcc_s)\.so"
)
_CONF_LIMIT = 1 << 20
# The libraries LG217 compares with the lock (NCCL, the CUDA runtime, cuDNN), by versioned name:
# only their SONAMEs decide anything, so only theirs are read (an ELF parse each).
SONAME_COMPARED = re.compile(r"^lib(nccl|cudart|cudnn)\.so\.\d")


def read_sonames(snap: PrefixSnapshot, root: Path, libraries: list[str] | None = None) -> None:
    """Read the SONAME of CUDA-stack, torch and runtime libraries that occur more than once.
    `libraries`: the regular files named *.so* among snap.files, where the listing knows them."""
    groups: dict[str, list[str]] = {}
    for path in snap.files if libraries is None else libraries:
        if ".so" not in path:  # most files; a substring test is far cheaper than the split below
            continue
        name = path.rsplit("/", 1)[-1]
        if name.startswith("lib") and path not in snap.symlinks and SONAME_MATTERS.match(name):
            groups.setdefault(name.split(".so")[0], []).append(path)
    read = None
    for paths in groups.values():
        if len(paths) < 2:
            continue
        read = read or SonameMemo(str(root))
        for path in paths:
            value = read(root / path)
            if value:
                snap.sonames[path] = value
    if read is not None:
        read.save()


def library_dirs(environ: dict, ld_conf_dir: Path, root: Path) -> list[LibraryDir]:
    dirs: list[tuple[str, str]] = []
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":"):
        if entry:
            dirs.append((entry, "LD_LIBRARY_PATH"))
    if ld_conf_dir.is_dir():
        for conf in sorted(ld_conf_dir.glob("*.conf")):
            for line in read_env_text(conf, _CONF_LIMIT).splitlines():
                line = line.split("#", 1)[0].strip()
                if line and not line.startswith("include"):
                    dirs.append((line, str(conf)))
    out = []
    read = SonameMemo("loader path")
    for path, origin in dirs:
        real = os.path.realpath(path)
        if real.startswith(str(root) + os.sep) or not os.path.isdir(real):
            continue
        libs = []
        try:
            names = sorted(os.listdir(real))
        except OSError:
            continue
        for name in names:
            if CUDA_STACK_LIBS.match(name):  # a link: its target's SONAME
                libs.append(
                    (name, read(Path(real) / name) if SONAME_COMPARED.match(name) else None)
                )
        out.append(LibraryDir(path, origin, tuple(libs)))
    read.save()
    return out


def soname(path: Path) -> str | None:
    """io/env/elf.py's soname(); pyelftools is imported at the first ELF file read, not with this
    module (about 20 ms of every clean-install and scan that reads none)."""
    from lockguard.io.env.elf import soname as read

    return read(path)


class SonameMemo:
    """soname() remembered by the library's stat: a repeat scan neither parses an ELF file nor
    imports pyelftools (tens of milliseconds) when the libraries are unchanged."""

    def __init__(self, scope: str) -> None:
        self._scope = scope
        self._memo: Memo | None = None  # opened at the first library read

    def __call__(self, path: Path) -> str | None:
        key = file_key(path)
        if key is None or key == MISSING:  # nothing to remember: soname() reads no such file
            return soname(path)
        if self._memo is None:
            self._memo = Memo("soname", self._scope, str | None)
        found, value = self._memo.get(str(path), (key,))
        if not found:
            value = soname(path)
            self._memo.put(str(path), (key,), value)
        return value

    def save(self) -> None:
        if self._memo is not None:
            self._memo.save()
