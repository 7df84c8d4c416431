"""Scan an installed environment: ask its interpreter for sys.path, read every dist-info RECORD and
conda-meta record, list the files under site-packages and lib/, the .pth files, and the loader's
search directories outside the prefix (LD_LIBRARY_PATH, /etc/ld.so.conf.d). Reads only.

Nothing in an environment is trusted: its interpreter runs with a timeout and its answer is checked
for shape; RECORD, METADATA and .pth files are read only when they are regular files,
with bounds."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.env.dist_records import (
    PTH_LIMIT,
    absent_files,
    conda_records,
    dists_in,
    mark_overwritten,
    pth_files,
)
from lockguard.io.env.egg_info import mark_conda_owned
from lockguard.io.env.file_listing import FileListing
from lockguard.io.env.interpreter import (
    InterpreterFacts,
    ask_interpreter,
    interpreter_of,
    reachable,
)
from lockguard.io.env.loader_paths import library_dirs
from lockguard.io.env.loader_paths import read_sonames as sonames_of
from lockguard.io.read import (
    open_regular,
)
from lockguard.model.prefix import (
    InstalledDist,
    PrefixSnapshot,
)


def scan_prefix(
    prefix: Path | None = None,
    python: Path | None = None,
    *,
    environ: dict | None = None,
    ld_conf_dir: Path = Path("/etc/ld.so.conf.d"),
    cuda_link: Path = Path("/usr/local/cuda"),
    read_sonames: bool = True,
) -> PrefixSnapshot:
    environ = dict(os.environ if environ is None else environ)
    early = None
    if (
        python is None
        and prefix is not None
        and (prefix / "conda-meta").is_dir()
        and not reachable(prefix / "bin" / "python")
    ):
        # a conda prefix without its python yet (a clean-install creates it): no sys.path to ask
        facts = InterpreterFacts(
            prefix=str(prefix),
            path=(),
            version="",
            purelib=str(prefix / "lib"),
            platlib=str(prefix / "lib"),
        )
        exe = Path(os.path.abspath(prefix)) / "bin" / "python"
    else:
        exe = interpreter_of(prefix, python)
        guess = Path(os.path.abspath(prefix)) if prefix is not None else exe.parent.parent
        _pth_must_be_files(guess)
        if (guess / "pyvenv.cfg").is_file() or (guess / "conda-meta").is_dir():
            # The interpreter takes tens of milliseconds to start: meanwhile the files of the
            # site-packages an environment has are listed and their RECORDs read. What the
            # interpreter then says decides what is used (a wrong guess is thrown away).
            early = _EarlyScan(Path(os.path.realpath(guess)), lambda: ask_interpreter(exe, environ))
            facts = early.facts()
        # a base interpreter (check --python /usr/bin/python3):
        # never list a system folder on a guess
        else:
            facts = ask_interpreter(exe, environ)
    root = Path(os.path.realpath(prefix or facts.prefix))
    snap = PrefixSnapshot(
        prefix=str(root),
        python=str(exe),
        python_version=facts.version,
        sys_path=[p for p in facts.path if p],
        # as the sys.path entries the dists were found in: links resolved
        user_site=os.path.realpath(facts.user_site) if facts.user_site else None,
        base_prefix=os.path.realpath(facts.base_prefix) if facts.base_prefix else None,
        pythonpath=[
            os.path.realpath(p) for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p
        ],
    )
    snap.real_sys_path = [os.path.realpath(p) for p in snap.sys_path]
    snap.scheme = {key: os.path.realpath(folder) for key, folder in facts.scheme().items()}
    site_dirs = []
    for candidate in (facts.purelib, facts.platlib):
        real = os.path.realpath(candidate)
        if (
            real.startswith(str(root) + os.sep)
            and real not in site_dirs
            and real != str(root / "lib")
        ):
            site_dirs.append(real)
    snap.site_dirs = site_dirs
    listing = early.listing_for(root, site_dirs) if early else None
    # find runs while the RECORDs below are read
    listing = listing or FileListing(str(root), site_dirs)
    sizes: dict[
        str, list[tuple[str, int]]
    ] = {}  # dist-info -> shared libraries with their RECORD size
    for entry in dict.fromkeys(snap.real_sys_path):
        if os.path.isdir(entry) and not entry.endswith(".zip"):
            read = early.site(entry, root) if early else None
            dists, more = read if read else (dists_in(entry, root, sizes), None)
            if more:
                sizes.update(more)
            snap.dists += dists
            snap.pth += pth_files(entry)
    snap.dists = mark_overwritten(snap.dists, str(root))
    snap.conda = conda_records(root)
    snap.is_conda = (root / "conda-meta").is_dir()
    if any(d.legacy for d in snap.dists) and snap.conda:
        mark_conda_owned(snap, root)
    listing.collect(snap)
    absent_files(snap, root, listing.prefixes, sizes, listing.sizes)
    if read_sonames:
        sonames_of(snap, root, listing.libraries)
    snap.library_dirs = library_dirs(environ, ld_conf_dir, root)
    if cuda_link.is_symlink() or cuda_link.exists():
        snap.cuda_link = (str(cuda_link), os.path.realpath(cuda_link))
    return snap


# a site-packages folder read: its dists, and each dist-info's shared libraries
# with their RECORD size
_SiteRead = tuple[list[InstalledDist], dict[str, list[tuple[str, int]]]]


class _EarlyScan:
    """The interpreter is asked in a thread while the site-packages folders a prefix of this
    layout has (lib/python*/site-packages) are listed and their dist-infos read. An error met
    early is raised only if that folder turns out to be one the scan uses, and only after the
    interpreter's own answer (its error comes first, as without the head start)."""

    def __init__(self, root: Path, ask: Callable[[], InterpreterFacts]) -> None:
        self.root = root
        self._answer: list[InterpreterFacts | BaseException] = []
        thread = threading.Thread(target=self._ask, args=(ask,), daemon=True)
        thread.start()
        self._thread = thread
        sites = sorted(
            str(p)
            for p in root.glob("lib/python3*/site-packages")
            if p.is_dir() and not p.is_symlink()
        )
        self.sites = [os.path.realpath(s) for s in sites]
        self.listing = FileListing(str(root), self.sites) if self.sites else None
        self.read: dict[str, _SiteRead | InputError] = {}
        for site in self.sites:
            sizes: dict[str, list[tuple[str, int]]] = {}
            try:
                self.read[site] = (dists_in(site, root, sizes), sizes)
            except InputError as exc:
                self.read[site] = exc

    def _ask(self, ask: Callable[[], InterpreterFacts]) -> None:
        try:
            self._answer.append(ask())
        except BaseException as exc:  # re-raised in the caller's thread
            self._answer.append(exc)

    def facts(self) -> InterpreterFacts:
        self._thread.join()
        answer = self._answer[0]
        if isinstance(answer, BaseException):
            self.discard()
            raise answer
        return answer

    def listing_for(self, root: Path, site_dirs: list[str]) -> FileListing | None:
        if (
            self.listing is not None
            and root == self.root
            and sorted(site_dirs) == sorted(self.sites)
        ):
            return self.listing
        self.discard()
        return None

    def site(self, site: str, root: Path) -> _SiteRead | None:
        if root != self.root or site not in self.read:
            return None
        found = self.read[site]
        if isinstance(found, InputError):
            raise found
        return found

    def discard(self) -> None:
        if self.listing is not None:
            self.listing.close()
        self.listing = None


def _pth_must_be_files(root: Path) -> None:
    """The interpreter reads every .pth of its site-packages at start-up: one that is a FIFO
    blocks it forever. Name that file instead of an interpreter that does not answer."""
    for pattern in ("lib/python*/site-packages/*.pth", "lib/site-packages/*.pth"):
        for path in sorted(root.glob(pattern)):
            try:
                os.close(open_regular(path, PTH_LIMIT))
            except (FileNotFoundError, PermissionError):
                continue  # a dangling link or an unreadable file: the interpreter skips it too
