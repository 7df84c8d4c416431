"""What an installed environment holds, as data: the scan (io/env/prefix_scan.py) fills it, the
inventory rules (install/inventory.py) read it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$")  # libfoo.so, libfoo.so.2, libfoo.so.2.18.1


class RecordEntry(NamedTuple):  # a tuple: a CUDA environment has hundreds of thousands of these
    # relative to the prefix, normalized ("lib/python3.11/site-packages/torch/lib/libc10.so")
    path: str
    sha256: str | None = None  # urlsafe-b64 digest as RECORD writes it
    outside: bool = False  # the RECORD line points outside the prefix (".." or an absolute path)
    raw: str = ""


@dataclass(frozen=True, slots=True)
class InstalledDist:
    name: str  # canonical
    version: str
    site: str  # the sys.path entry it was found in (absolute)
    dist_info: str  # absolute path of the .dist-info folder
    installer: str = ""
    paths: tuple[str, ...] = ()  # RECORD entries inside the prefix, relative to it
    outside: tuple[str, ...] = ()  # RECORD entries that point outside the prefix, as written
    # RECORD rows naming a folder that exists (`lib`, no slash), relative to the site
    folder_rows: tuple[str, ...] = ()
    in_prefix: bool = True
    absent: tuple[str, ...] = ()  # RECORD entries inside the prefix that do not exist
    resized: tuple[str, ...] = ()  # shared libraries whose size differs from the RECORD's
    requires: tuple[str, ...] = ()  # Requires-Dist (read for the installer tools only)
    # where `paths` come from: "RECORD"; a legacy .egg-info install (`setup.py install`, pip before
    # 23.1) has none: "installed-files.txt" (what pip recorded), or "top-level names" (inferred from
    # top_level.txt: every file under those folders)
    ownership: str = "RECORD"
    # another .dist-info of the same name in the same folder was installed over this one (pip
    # --ignore-installed): files both RECORDs list whose bytes on disk are the other's (a sample)
    overwritten: tuple[str, ...] = ()

    @property
    def record_file(self) -> str:
        return f"{self.dist_info}/RECORD"

    @property
    def legacy(self) -> bool:
        """An .egg-info install: no RECORD, so no hashes to verify and no exact list to undo."""
        return self.ownership != "RECORD"

    def ownership_note(self) -> str:
        """How lockguard knows this distribution's files, when not from a RECORD."""
        if self.ownership == "installed-files.txt":
            return "its files as its installed-files.txt lists them"
        if self.ownership != "RECORD":
            return "its files inferred from its top-level names (top_level.txt), not recorded"
        return ""


@dataclass(frozen=True, slots=True)
class CondaInstalled:
    name: str
    version: str
    build: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PthFile:
    path: str  # absolute
    injected: tuple[str, ...]  # directories it adds to sys.path
    owner: str | None = None
    existing: tuple[str, ...] = ()  # of those, the folders the scan found


def relative_path(path: str, start: str) -> str:
    """os.path.relpath of two absolute, normalized paths, asking neither the file system nor the
    working folder: "/env/lib/x.pth" from "/env" is "lib/x.pth"."""
    parts, base = [p for p in path.split("/") if p], [p for p in start.split("/") if p]
    common = 0
    while common < min(len(parts), len(base)) and parts[common] == base[common]:
        common += 1
    return "/".join([".."] * (len(base) - common) + parts[common:]) or "."


@dataclass(frozen=True, slots=True)
class LibraryDir:
    """A directory the dynamic loader searches before the wheels' own RPATHs."""

    path: str
    origin: str  # "LD_LIBRARY_PATH" or the ld.so.conf.d file
    libraries: tuple[
        tuple[str, str | None], ...
    ] = ()  # (file name, soname) of CUDA-stack libraries


class Unrecorded(NamedTuple):
    """The listed files that no in-prefix RECORD lists, found by the scan in passing (it checks
    every RECORD path against the listing anyway); valid for as many files and distributions as it
    saw."""

    files: int
    dists: int
    paths: set[str]


@dataclass
class PrefixSnapshot:
    prefix: str  # absolute, resolved
    python: str
    python_version: str = ""
    sys_path: list[str] = field(default_factory=list)
    # each sys.path entry with its links resolved (None: as listed)
    real_sys_path: list[str] | None = None
    site_dirs: list[str] = field(default_factory=list)  # site-packages folders inside the prefix
    user_site: str | None = None
    # where sys.path entries outside the prefix come from (LG213 names them): the interpreter's
    # sys.base_prefix (a venv's base), and the PYTHONPATH entries it was started with (absolute)
    base_prefix: str | None = None
    pythonpath: list[str] = field(default_factory=list)
    dists: list[InstalledDist] = field(default_factory=list)
    conda: list[CondaInstalled] = field(default_factory=list)
    # every file under site-packages and lib/ (relative)
    files: list[str] = field(default_factory=list)
    symlinks: dict[str, str] = field(default_factory=dict)  # relative path -> resolved target
    # relative path -> SONAME (libraries that matter)
    sonames: dict[str, str] = field(default_factory=dict)
    pth: list[PthFile] = field(default_factory=list)
    library_dirs: list[LibraryDir] = field(default_factory=list)
    cuda_link: tuple[str, str] | None = None  # (/usr/local/cuda, its target)
    is_conda: bool = False  # the prefix has a conda-meta/ folder (possibly still empty)
    # sysconfig: purelib, platlib, scripts, data, include (absolute)
    scheme: dict[str, str] = field(default_factory=dict)
    unrecorded: Unrecorded | None = field(default=None, repr=False, compare=False)
