"""Scan an installed environment: ask its interpreter for sys.path, read every dist-info RECORD and
conda-meta record, list the files under site-packages and lib/, the .pth files, and the loader's
search directories outside the prefix (LD_LIBRARY_PATH, /etc/ld.so.conf.d). Reads only.

Nothing in an environment is trusted: its interpreter runs with a timeout and its answer is checked
for shape; RECORD, METADATA and .pth files are read only when they are regular files,
with bounds."""

from __future__ import annotations

import base64
import csv
import errno
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from lockguard.errors import InputError
from lockguard.io.env.egg_info import egg_info_dists, mark_conda_owned
from lockguard.io.env.file_listing import FileListing
from lockguard.io.env.loader_paths import library_dirs
from lockguard.io.env.loader_paths import read_sonames as sonames_of
from lockguard.io.env.scan_memo import Memo, file_key
from lockguard.io.read import (
    MIB,
    open_regular,
    read_env_bytes,
    read_env_text,
    read_head,
    regular_file_sha256,
)
from lockguard.io.run import run_bounded
from lockguard.model.names import INSTALLER_TOOLS, canonical_name
from lockguard.model.prefix import (
    SHARED_LIBRARY,
    CondaInstalled,
    InstalledDist,
    PrefixSnapshot,
    PthFile,
    RecordEntry,
    Unrecorded,
)

_MARK = "LOCKGUARD-FACTS:"
_ASK = r"""
import json, site, sys, sysconfig
paths = sysconfig.get_paths()
print("LOCKGUARD-FACTS:" + json.dumps({
    "prefix": sys.prefix, "executable": sys.executable, "path": sys.path,
    "base_prefix": sys.base_prefix,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "user_site": site.getusersitepackages() if site.ENABLE_USER_SITE else None,
    "purelib": paths["purelib"], "platlib": paths["platlib"], "scripts": paths.get("scripts"),
    "data": paths.get("data"), "include": paths.get("include"),
}))
"""
_FACT_TYPES = {"prefix": str, "path": list, "version": str, "purelib": str, "platlib": str}
_OPTIONAL = ("user_site", "scripts", "data", "include", "executable", "base_prefix")


@dataclass(frozen=True, slots=True)
class InterpreterFacts:
    """What an interpreter says of itself (_ASK's answer, checked by _facts_problem)."""

    prefix: str
    path: list[str]
    version: str
    purelib: str
    platlib: str
    user_site: str | None = None
    scripts: str | None = None
    data: str | None = None
    include: str | None = None
    executable: str | None = None
    base_prefix: str | None = None

    def scheme(self) -> dict[str, str]:
        """The install scheme's folders the interpreter named (sysconfig's keys)."""
        folders = {
            "purelib": self.purelib,
            "platlib": self.platlib,
            "scripts": self.scripts,
            "data": self.data,
            "include": self.include,
        }
        return {key: folder for key, folder in folders.items() if folder}


RECORD_LIMIT = 64 * MIB  # torch's RECORD is about 2 MB
METADATA_HEAD = 1 * MIB  # only the header block is read; a long description may follow
PTH_LIMIT = 1 * MIB
CONDA_RECORD_LIMIT = 64 * MIB


def interpreter_timeout() -> float:
    try:
        return float(os.environ.get("LOCKGUARD_INTERPRETER_TIMEOUT", "60"))
    except ValueError:
        return 60.0


def interpreter_of(prefix: Path | None, python: Path | None) -> Path:
    """The interpreter to ask. A --python value is a path (relative ones against the working
    directory), never a name looked up on PATH; the venv's symlink is kept, not resolved."""
    if python is not None:
        python = Path(os.path.abspath(python))
        if not _reachable(python):
            raise InputError(
                f"{python} does not exist", file=str(python), hint="pass the environment's python"
            )
        return python
    assert prefix is not None
    prefix = Path(os.path.abspath(prefix))
    for candidate in (prefix / "bin" / "python", prefix / "bin" / "python3", prefix / "python.exe"):
        if _reachable(candidate):
            return candidate
    raise InputError(
        f"{prefix} has no bin/python: not a virtual environment or conda prefix",
        file=str(prefix),
        hint="create it first (python -m venv / conda create), or pass --python EXE",
    )


def _reachable(path: Path) -> bool:
    """Whether path exists; a path this user may not look at (a folder on its way it cannot
    enter, the interpreter a venv links to in such a folder) is bad input naming it, exit 2."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise InputError(
            f"cannot run {path}: {exc.strerror or exc} (stat {exc.filename or path})",
            file=str(path),
            hint="a symlink loop: point the link at a real interpreter, or recreate the "
            "environment (python -m venv --clear DIR)"
            if exc.errno == errno.ELOOP
            else "the interpreter, or a folder on its way, is not open to this user: run as a "
            "user that can run it, or pass another --python",
        ) from None
    return True


def ask_interpreter(python: Path, env: dict[str, str] | None = None) -> InterpreterFacts:
    timeout = interpreter_timeout()
    done = run_bounded(
        [str(python), "-B", "-c", _ASK],
        timeout=timeout,
        env=env,
        cap=4 * MIB,
        stderr_cap=4 * MIB,
        die_with_lockguard=True,
    )
    if done.returncode is None:
        raise InputError(f"cannot run {python}: {done.start_error}", file=str(python))
    if done.timed_out:
        raise InputError(
            f"{python} did not answer within {timeout:g} s; it was stopped (with its children)",
            file=str(python),
            hint="is it a working Python interpreter? try `PYTHON -c pass`",
        )
    if done.flooded:
        raise InputError(
            f"{python} printed more than 4 MiB instead of its sys.path; it was stopped",
            file=str(python),
        )
    if done.returncode != 0:
        raise InputError(
            f"{python} failed to report its sys.path (exit {done.returncode}): "
            f"{done.stderr_tail(5)[-500:]}",
            file=str(python),
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    try:
        facts: object = json.loads(lines[-1][len(_MARK) :]) if lines else None
    except (
        ValueError,
        RecursionError,
    ):  # nesting deep enough to exhaust the parser is no answer either
        facts = None
    problem = _facts_problem(facts)
    if problem or not isinstance(facts, dict):
        shown = done.stdout.strip()[:200]
        raise InputError(
            f"{python} is not a Python that lockguard can ask for its sys.path: {problem}"
            + (f" (it printed {shown!r})" if shown else " (it printed nothing)"),
            file=str(python),
            hint="pass the environment's own python (bin/python of a venv or conda prefix)",
        )
    return InterpreterFacts(
        prefix=facts["prefix"],
        path=facts["path"],
        version=facts["version"],
        purelib=facts["purelib"],
        platlib=facts["platlib"],
        user_site=facts.get("user_site"),
        scripts=facts.get("scripts"),
        data=facts.get("data"),
        include=facts.get("include"),
        executable=facts.get("executable"),
        base_prefix=facts.get("base_prefix"),
    )


def _facts_problem(facts: object) -> str | None:
    if not isinstance(facts, dict):
        return "no answer of the expected form"
    for key, kind in _FACT_TYPES.items():
        if not isinstance(facts.get(key), kind):
            return f"its answer has no {key}"
    if not all(isinstance(p, str) for p in facts["path"]):
        return "its sys.path holds something other than text"
    for key in _OPTIONAL:
        if facts.get(key) is not None and not isinstance(facts[key], str):
            return f"its {key} is not text"
    return None


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
        and not _reachable(prefix / "bin" / "python")
    ):
        # a conda prefix without its python yet (a clean-install creates it): no sys.path to ask
        facts = InterpreterFacts(
            prefix=str(prefix),
            path=[],
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
            dists, more = read if read else (_dists_in(entry, root, sizes), None)
            if more:
                sizes.update(more)
            snap.dists += dists
            snap.pth += _pth_files(entry)
    snap.dists = _mark_overwritten(snap.dists, str(root))
    snap.conda = conda_records(root)
    snap.is_conda = (root / "conda-meta").is_dir()
    if any(d.legacy for d in snap.dists) and snap.conda:
        mark_conda_owned(snap, root)
    listing.collect(snap)
    _absent_files(snap, root, listing.prefixes, sizes, listing.sizes)
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
                self.read[site] = (_dists_in(site, root, sizes), sizes)
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


class ParsedDistInfo(NamedTuple):
    """What a dist-info's METADATA, INSTALLER and RECORD say (no name: not a distribution)."""

    name: str  # canonical
    version: str
    installer: str
    requires: tuple[str, ...]  # of the installer tools only
    inside: tuple[str, ...]
    outside: tuple[str, ...]
    sizes: tuple[tuple[str, int], ...]


_DIST_INFO_FILES = ("METADATA", "INSTALLER", "RECORD")


def _dists_in(
    site: str, root: Path, sizes: dict[str, list[tuple[str, int]]]
) -> list[InstalledDist]:
    out: list[InstalledDist] = []
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return out
    in_prefix = site.startswith(str(root) + os.sep)
    memo = Memo("dist-info", f"{root}\0{site}", ParsedDistInfo)
    for name in names:
        if not name.endswith(".dist-info"):
            continue
        info = os.path.join(site, name)
        # before reading
        keys = tuple(file_key(os.path.join(info, file)) for file in _DIST_INFO_FILES)
        found, parsed = memo.get(name, keys)
        if not found:
            parsed = _parse_dist_info(info, site, root)
            memo.put(name, keys, parsed)
        if not parsed.name:
            continue
        sizes[info] = list(parsed.sizes)
        out.append(
            InstalledDist(
                name=parsed.name,
                version=parsed.version,
                site=site,
                dist_info=info,
                installer=parsed.installer,
                paths=parsed.inside,
                outside=parsed.outside,
                in_prefix=in_prefix,
                requires=parsed.requires,
            )
        )
    memo.save()
    if any(name.endswith(".egg-info") for name in names):
        out += egg_info_dists(site, root, names, _metadata)
    return out


def _parse_dist_info(info: str, site: str, root: Path) -> ParsedDistInfo:
    meta = _metadata(os.path.join(info, "METADATA"))
    if not meta.get("name"):
        return ParsedDistInfo("", "", "", (), (), (), ())
    inside, outside, sizes = _records(os.path.join(info, "RECORD"), site, root)
    dist_name = canonical_name(meta["name"])
    return ParsedDistInfo(
        dist_name,
        meta.get("version", ""),
        _head(os.path.join(info, "INSTALLER"), 256).strip(),
        tuple(meta.get("requires", ())) if dist_name in INSTALLER_TOOLS else (),
        inside,
        outside,
        tuple(sizes),
    )


def _metadata(path: str) -> dict:
    out: dict = {}
    text = _head(path)
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key in ("Name", "Version") and key.lower() not in out:
            out[key.lower()] = value.strip()
        elif key == "Requires-Dist":
            out.setdefault("requires", []).append(value.strip())
    return out


def _head(path: str, size: int = METADATA_HEAD) -> str:
    """The first `size` bytes of a regular file (the header block of a METADATA)."""
    try:
        return read_head(path, size).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", file=path) from None


def _records(
    path: str, site: str, root: Path
) -> tuple[tuple[str, ...], tuple[str, ...], list[tuple[str, int]]]:
    """(paths inside the prefix, relative; entries pointing outside it, as written; (path, size)
    of its shared libraries, to compare with what is installed)."""
    root_s = str(root)
    inside_site = site.startswith(root_s + os.sep)
    site_rel = site[len(root_s) + 1 :] + "/" if inside_site else ""
    text = read_env_text(path, RECORD_LIMIT)
    quoted = '"' in text
    if quoted:
        rows = [row for row in _csv_rows(text, path) if row and row[0]]
        names = [row[0] for row in rows]
    else:
        names = [n for n in (line.split(",", 1)[0] for line in text.splitlines()) if n]
    # the common case: every name is plain, seen on the whole text at once (hashes are base64url)
    if inside_site and not quoted and not _odd(text):
        plain = names
    else:
        plain = [n for n in names if inside_site and _plain(n)]
    inside = [site_rel + n for n in plain]  # no path arithmetic at all
    outside = []
    if len(plain) != len(names):
        for raw in names:
            if inside_site and _plain(raw):
                continue
            absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(site, raw))
            # `.`, `..`, `lib/` name a folder (the site itself, one above it), never a file: an
            # invalid row (LG219), not a file found missing
            folder = raw.endswith("/") or absolute == site or site.startswith(absolute + os.sep)
            if absolute.startswith(root_s + os.sep) and not folder:
                inside.append(absolute[len(root_s) + 1 :])
            else:
                outside.append(raw)
    sizes = []
    if inside_site and ".so" in text:
        rows = rows if quoted else [line.split(",") for line in _lines_with(text, ".so")]
        for row in rows:
            if (
                len(row) > 2
                and row[2].strip().isdigit()
                and SHARED_LIBRARY.search(row[0])
                and _plain(row[0])
            ):
                sizes.append((site_rel + row[0], int(row[2])))
    return tuple(inside), tuple(outside), sizes


def _lines_with(text: str, needle: str) -> list[str]:
    """The lines of a text that contain `needle`, found by searching for it (a RECORD has a few
    shared libraries among thousands of lines: no split of the whole text)."""
    out = []
    at = text.find(needle)
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        out.append(text[start:end].rstrip("\r"))
        at = text.find(needle, end)
    return out


def _odd(text: str) -> bool:
    """Whether any name of a RECORD text may need normalizing (substring tests run at C speed)."""
    return (
        text.startswith(("/", ".,", "..,"))
        or "\n/" in text
        or "\n.," in text
        or "\n..," in text
        or "/..," in text
        or "./" in text
        or "\\" in text
        or "//" in text
        or "/," in text
        or "/.," in text
    )


def _plain(name: str) -> bool:
    """A RECORD path that needs no normalizing: relative, no `.`/`..` parts, no empty parts."""
    return (
        name[0] != "/"
        and "./" not in name
        and "\\" not in name
        and "//" not in name
        and not name.endswith(("/", "/.", "/.."))
        and name not in (".", "..")
    )


def _record_rows(text: str, path: str = "RECORD"):
    return _csv_rows(text, path) if '"' in text else (line.split(",") for line in text.splitlines())


def _csv_rows(text: str, path: str) -> list[list[str]]:
    """The rows of a quoted RECORD; a RECORD the csv module refuses (a field over its 131,072
    characters, a stray quote) is damage, named with its line, never a crash."""
    reader = csv.reader(text.splitlines())
    try:
        return list(reader)
    except csv.Error as exc:
        raise InputError(
            f"{path}:{reader.line_num}: this RECORD cannot be read ({exc})",
            file=path,
            line=reader.line_num,
            hint="the distribution's RECORD is damaged: reinstall it (pip install "
            "--force-reinstall --no-deps NAME==VERSION), or remove its .dist-info folder",
        ) from None


def _absent_files(
    snap: PrefixSnapshot,
    root: Path,
    listed: tuple[str, ...],
    sizes: dict[str, list[tuple[str, int]]],
    listed_sizes: dict[str, int],
) -> None:
    """Which RECORD entries of the prefix's distributions are missing, and which shared libraries
    have another size than their RECORD says: a set lookup in the listing where it covers the path,
    a stat elsewhere (bin/, include/, share/)."""
    present = set(snap.files)
    # what no RECORD lists: the inventory's unowned files, found on the way
    unrecorded = set(present)
    for i, dist in enumerate(snap.dists):
        if not dist.in_prefix:
            continue
        absent: tuple[str, ...] = ()
        before = len(unrecorded)
        # in C; removing as many as it lists: all are listed
        unrecorded.difference_update(dist.paths)
        if before - len(unrecorded) != len(dist.paths) and not present.issuperset(dist.paths):
            unlisted = [p for p in dist.paths if p not in present]
            absent = tuple(
                p for p in unlisted if p.startswith(listed) or not os.path.lexists(f"{root}/{p}")
            )
        resized = []
        for path, size in sizes.get(dist.dist_info, ()):
            if path in present and path not in snap.symlinks:
                try:
                    actual = listed_sizes.get(path)
                    if (os.lstat(f"{root}/{path}").st_size if actual is None else actual) != size:
                        resized.append(path)
                except OSError:
                    pass
        if absent or resized:
            snap.dists[i] = _replace(dist, absent=absent, resized=tuple(resized))
    snap.unrecorded = Unrecorded(len(snap.files), len(snap.dists), unrecorded)


# files hashed per copy to tell which of two .dist-info of one name wrote the files on disk
_OVERWRITE_SAMPLE = 8
_OVERWRITE_FILE_LIMIT = 64 * MIB


def _mark_overwritten(dists: list[InstalledDist], root: str) -> list[InstalledDist]:
    """Two .dist-info of one distribution in one folder (`pip install --ignore-installed` over an
    installed version) share paths: the bytes there are the last install's. For each copy, the
    paths both RECORDs list with different digests are hashed (a few, .py files first); a copy
    whose digest lost to another's records them as `overwritten`."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, dist in enumerate(dists):
        if not dist.legacy:
            groups.setdefault((dist.site, dist.name), []).append(index)
    out = list(dists)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        digests = {i: _digests(dists[i], root) for i in indices}
        on_disk: dict[str, str | None] = {}
        for i in indices:
            mine = digests[i]
            others = [digests[j] for j in indices if j != i]
            differing = sorted(
                (p for p, d in mine.items() if any(o.get(p) not in (None, d) for o in others)),
                key=lambda p: (not p.endswith(".py"), p),
            )[:_OVERWRITE_SAMPLE]
            lost = []
            for path in differing:
                if path not in on_disk:
                    on_disk[path] = _file_digest(os.path.join(root, path))
                actual = on_disk[path]
                if actual != mine[path] and any(o.get(path) == actual for o in others):
                    lost.append(path)
            if lost:
                out[i] = _replace(dists[i], overwritten=tuple(lost))
    return out


def _digests(dist: InstalledDist, root: str) -> dict[str, str]:
    """RECORD path (relative to the prefix) -> its sha256, for the entries inside the prefix."""
    try:
        entries = record_entries(dist, root)
    except InputError:
        return {}
    return {e.path: e.sha256 for e in entries if e.sha256 and not e.outside}


def _file_digest(path: str) -> str | None:
    """The sha256 of a regular file as RECORD writes it (urlsafe base64, no padding), or None."""
    try:
        if os.stat(path).st_size > _OVERWRITE_FILE_LIMIT:
            return None
        digest = regular_file_sha256(path).digest()
    except (OSError, InputError):
        return None
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _replace(dist: InstalledDist, **changes) -> InstalledDist:
    return replace(dist, **changes)


def record_entries(dist: InstalledDist, root: str) -> list[RecordEntry]:
    """The RECORD of a distribution with its digests (for --verify-files)."""
    out = []
    for row in _record_rows(read_env_text(dist.record_file, RECORD_LIMIT), dist.record_file):
        if not row or not row[0]:
            continue
        raw = row[0]
        absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(dist.site, raw))
        digest = row[1][7:] if len(row) > 1 and row[1].startswith("sha256=") else None
        inside = absolute.startswith(root + os.sep)
        out.append(
            RecordEntry(absolute[len(root) + 1 :] if inside else absolute, digest, not inside, raw)
        )
    return out


def _pth_files(site: str) -> list[PthFile]:
    out: list[PthFile] = []
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".pth"))
    except OSError:
        return out
    for name in names:
        injected = []
        for line in read_env_text(os.path.join(site, name), PTH_LIMIT).splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            directory = line if os.path.isabs(line) else os.path.join(site, line)
            injected.append(os.path.normpath(directory))
        if injected:
            out.append(
                PthFile(
                    os.path.join(site, name),
                    tuple(injected),
                    existing=tuple(d for d in injected if os.path.isdir(d)),
                )
            )
    return out


def conda_records(root: Path) -> list[CondaInstalled]:
    """conda-meta/*.json; a record that is not a JSON object with a text name, version and build
    and a list of file paths is bad input naming the file (conda itself would fail on it)."""
    meta = root / "conda-meta"
    out: list[CondaInstalled] = []
    if not meta.is_dir():
        return out
    for path in sorted(meta.glob("*.json")):
        try:  # conda writes its records as UTF-8 JSON and fails on anything else
            data = json.loads(
                read_env_bytes(path, CONDA_RECORD_LIMIT, missing_ok=False).decode("utf-8")
            )
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise InputError(
                f"{path} is not valid UTF-8 JSON ({str(exc)[:200]})",
                file=str(path),
                hint="a damaged conda record: reinstall that package with conda, "
                "or move the file away",
            ) from None
        files = data.get("files") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("name"), str)
            or not isinstance(data.get("version", ""), (str, int, float))
            or not isinstance(data.get("build", ""), str)
            or not (
                files is None or isinstance(files, list) and all(isinstance(f, str) for f in files)
            )
        ):
            raise InputError(
                f"{path} is not a conda package record (a JSON object with text name, version, "
                "build and a list of files)",
                file=str(path),
                hint="a damaged conda record: reinstall that package with conda, "
                "or move the file away",
            )
        out.append(
            CondaInstalled(
                data["name"],
                str(data.get("version", "")),
                str(data.get("build", "")),
                tuple(files or ()),
            )
        )
    return out
