"""Scan an installed environment: ask its interpreter for sys.path, read every dist-info RECORD and
conda-meta record, list the files under site-packages and lib/, the .pth files, and the loader's
search directories outside the prefix (LD_LIBRARY_PATH, /etc/ld.so.conf.d). Reads only."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from pathlib import Path

from lockguard.errors import InputError
from lockguard.model.names import canonical_name
from lockguard.model.prefix import (
    CondaInstalled,
    InstalledDist,
    LibraryDir,
    PrefixSnapshot,
    PthFile,
    RecordEntry,
)

# The CUDA stack and torch, as library names: what the loader's path must not shadow.
_CUDA_STACK = r"cudart|cudnn[a-z_]*|nccl|cublas(Lt)?|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink|torch[a-z_]*|c10[a-z_]*"
CUDA_STACK_LIBS = re.compile(rf"^lib({_CUDA_STACK})\.so")
# Libraries whose duplicates break processes (loaded into one global namespace): the CUDA stack,
# torch, and the compiler runtimes. Their SONAMEs are read when a name occurs twice.
SONAME_MATTERS = re.compile(rf"^lib({_CUDA_STACK}|nvToolsExt|cupti|shm|gomp|iomp5|stdc\+\+|gcc_s)\.so")

_ASK = r"""
import json, site, sys, sysconfig
print(json.dumps({
    "prefix": sys.prefix, "executable": sys.executable, "path": sys.path,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "user_site": site.getusersitepackages() if site.ENABLE_USER_SITE else None,
    "purelib": sysconfig.get_paths()["purelib"], "platlib": sysconfig.get_paths()["platlib"],
}))
"""


def interpreter_of(prefix: Path | None, python: Path | None) -> Path:
    if python is not None:
        if not python.exists():
            raise InputError(f"{python} does not exist", file=str(python), hint="pass the environment's python")
        return python
    assert prefix is not None
    for candidate in (prefix / "bin" / "python", prefix / "bin" / "python3", prefix / "python.exe"):
        if candidate.exists():
            return candidate
    raise InputError(f"{prefix} has no bin/python: not a virtual environment or conda prefix", file=str(prefix),
                     hint="create it first (python -m venv / conda create), or pass --python EXE")


def ask_interpreter(python: Path, env: dict | None = None) -> dict:
    try:
        done = subprocess.run([str(python), "-c", _ASK], capture_output=True, text=True, timeout=60,
                              env=env)
    except OSError as exc:
        raise InputError(f"cannot run {python}: {exc}", file=str(python)) from None
    if done.returncode != 0:
        raise InputError(f"{python} failed to report its sys.path: {done.stderr.strip()[-500:]}", file=str(python))
    return json.loads(done.stdout)


def scan_prefix(prefix: Path | None = None, python: Path | None = None, *, environ: dict | None = None,
                ld_conf_dir: Path = Path("/etc/ld.so.conf.d"), cuda_link: Path = Path("/usr/local/cuda"),
                read_sonames: bool = True) -> PrefixSnapshot:
    environ = dict(os.environ if environ is None else environ)
    if python is None and prefix is not None and (prefix / "conda-meta").is_dir() and not (prefix / "bin" / "python").exists():
        # a conda prefix without its python yet (a clean-install creates it): no sys.path to ask
        facts = {"prefix": str(prefix), "path": [], "version": "", "user_site": None,
                 "purelib": str(prefix / "lib"), "platlib": str(prefix / "lib")}
        exe = prefix / "bin" / "python"
    else:
        exe = interpreter_of(prefix, python)
        facts = ask_interpreter(exe, environ)
    root = Path(os.path.realpath(prefix or facts["prefix"]))
    snap = PrefixSnapshot(prefix=str(root), python=str(exe), python_version=facts["version"],
                          sys_path=[p for p in facts["path"] if p], user_site=facts.get("user_site"))
    site_dirs = []
    for candidate in (facts["purelib"], facts["platlib"]):
        real = os.path.realpath(candidate)
        if real.startswith(str(root) + os.sep) and real not in site_dirs and real != str(root / "lib"):
            site_dirs.append(real)
    snap.site_dirs = site_dirs
    listing = _FileListing(root, site_dirs)  # find runs while the RECORDs below are read
    for entry in dict.fromkeys(os.path.realpath(p) for p in snap.sys_path):
        if os.path.isdir(entry) and not entry.endswith(".zip"):
            snap.dists += _dists_in(entry, root)
            snap.pth += _pth_files(entry)
    snap.conda = _conda_records(root)
    snap.is_conda = (root / "conda-meta").is_dir()
    listing.collect(snap)
    if read_sonames:
        _read_sonames(snap, root)
    snap.library_dirs = _library_dirs(environ, ld_conf_dir, root)
    if cuda_link.is_symlink() or cuda_link.exists():
        snap.cuda_link = (str(cuda_link), os.path.realpath(cuda_link))
    return snap


def _dists_in(site: str, root: Path) -> list[InstalledDist]:
    out = []
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return out
    in_prefix = site.startswith(str(root) + os.sep)
    for name in names:
        if not name.endswith(".dist-info"):
            continue
        info = os.path.join(site, name)
        meta = _metadata(os.path.join(info, "METADATA"))
        if not meta.get("name"):
            continue
        inside, outside = _records(os.path.join(info, "RECORD"), site, root)
        out.append(InstalledDist(
            name=canonical_name(meta["name"]), version=meta.get("version", ""), site=site, dist_info=info,
            installer=_read(os.path.join(info, "INSTALLER")).strip(), paths=inside, outside=outside,
            in_prefix=in_prefix,
        ))
    return out


def _metadata(path: str) -> dict:
    out: dict = {}
    text = _read(path)
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key in ("Name", "Version") and key.lower() not in out:
            out[key.lower()] = value.strip()
    return out


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _records(path: str, site: str, root: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(paths inside the prefix, relative; entries pointing outside it, as written)."""
    root_s = str(root)
    inside_site = site.startswith(root_s + os.sep)
    site_rel = site[len(root_s) + 1:] + "/" if inside_site else ""
    names = [row[0] for row in _record_rows(_read(path)) if row and row[0]]
    plain = [n for n in names if inside_site and n[0] != "/" and "./" not in n and "\\" not in n]
    inside = [site_rel + n for n in plain]  # the common case: no path arithmetic at all
    outside = []
    if len(plain) != len(names):
        for raw in names:
            if inside_site and raw[0] != "/" and "./" not in raw and "\\" not in raw:
                continue
            absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(site, raw))
            if absolute.startswith(root_s + os.sep):
                inside.append(absolute[len(root_s) + 1:])
            else:
                outside.append(raw)
    return tuple(inside), tuple(outside)


def _record_rows(text: str):
    return csv.reader(text.splitlines()) if '"' in text else (line.split(",") for line in text.splitlines())


def record_entries(dist: InstalledDist, root: str) -> list[RecordEntry]:
    """The RECORD of a distribution with its digests (for --verify-files)."""
    out = []
    for row in _record_rows(_read(dist.record_file)):
        if not row or not row[0]:
            continue
        raw = row[0]
        absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(dist.site, raw))
        digest = row[1][7:] if len(row) > 1 and row[1].startswith("sha256=") else None
        inside = absolute.startswith(root + os.sep)
        out.append(RecordEntry(absolute[len(root) + 1:] if inside else absolute, digest, not inside, raw))
    return out


def _pth_files(site: str) -> list[PthFile]:
    out = []
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".pth"))
    except OSError:
        return out
    for name in names:
        injected = []
        for line in _read(os.path.join(site, name)).splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            directory = line if os.path.isabs(line) else os.path.join(site, line)
            injected.append(os.path.normpath(directory))
        if injected:
            out.append(PthFile(os.path.join(site, name), tuple(injected)))
    return out


def _conda_records(root: Path) -> list[CondaInstalled]:
    meta = root / "conda-meta"
    out = []
    if not meta.is_dir():
        return out
    for path in sorted(meta.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if "name" in data:
            out.append(CondaInstalled(data["name"], str(data.get("version", "")), str(data.get("build", "")),
                                      tuple(data.get("files") or ())))
    return out


class _FileListing:
    """Every file under site-packages and the prefix's lib/ (symlinked folders are not entered).

    GNU find lists a CUDA environment's hundreds of thousands of files far faster than a Python
    walk, and it runs in parallel with the RECORD parsing; where find is missing, a walk does it."""

    def __init__(self, root: Path, site_dirs: list[str]) -> None:
        import shutil

        self.root = str(root)
        tops = [t for t in dict.fromkeys([self.root + "/lib"] + site_dirs) if os.path.isdir(t)]
        self.tops = [t for t in tops if not any(t != o and t.startswith(o + os.sep) for o in tops)]
        self.process = None
        if self.tops and shutil.which("find"):
            relative = [t[len(self.root) + 1:] for t in self.tops]
            try:
                self.process = subprocess.Popen(
                    ["find", *relative, "-name", ".lockguard", "-prune", "-o", "-type", "l", "-printf", "L%p\\0",
                     "-o", "-type", "f", "-printf", "F%p\\0"],
                    cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            except OSError:
                self.process = None
        self._chunks: list[bytes] = []
        if self.process is not None:
            import threading

            # drain the pipe meanwhile: a full pipe would stop find until collect()
            self._reader = threading.Thread(target=self._drain, daemon=True)
            self._reader.start()

    def _drain(self) -> None:
        for chunk in iter(lambda: self.process.stdout.read(1 << 20), b""):
            self._chunks.append(chunk)

    def collect(self, snap: PrefixSnapshot) -> None:
        if self.process is not None:
            self._reader.join(timeout=600)
            self.process.wait(timeout=600)
            out = b"".join(self._chunks)
            if self.process.returncode == 0 or out:
                links = []
                for item in out.decode("utf-8", "surrogateescape").split("\0"):
                    if item:
                        (links if item[0] == "L" else snap.files).append(item[1:])
                snap.symlinks = {path: os.path.realpath(os.path.join(self.root, path)) for path in links}
                snap.files += links
                return
        for top in self.tops:
            _walk(snap, top, top[len(self.root) + 1:])


def _walk(snap: PrefixSnapshot, folder: str, relative: str) -> None:
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            rel = f"{relative}/{entry.name}"
            if entry.is_symlink():
                snap.files.append(rel)
                snap.symlinks[rel] = os.path.realpath(entry.path)
            elif entry.is_dir():
                if entry.name != ".lockguard":
                    _walk(snap, entry.path, rel)
            else:
                snap.files.append(rel)


def _read_sonames(snap: PrefixSnapshot, root: Path) -> None:
    """Read the SONAME of CUDA-stack, torch and runtime libraries that occur more than once."""
    from lockguard.io.env.elf import soname

    groups: dict[str, list[str]] = {}
    for path in snap.files:
        name = path.rsplit("/", 1)[-1]
        if name.startswith("lib") and path not in snap.symlinks and SONAME_MATTERS.match(name):
            groups.setdefault(name.split(".so")[0], []).append(path)
    for paths in groups.values():
        if len(paths) < 2:
            continue
        for path in paths:
            value = soname(root / path)
            if value:
                snap.sonames[path] = value


def _library_dirs(environ: dict, ld_conf_dir: Path, root: Path) -> list[LibraryDir]:
    from lockguard.io.env.elf import soname

    dirs: list[tuple[str, str]] = []
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":"):
        if entry:
            dirs.append((entry, "LD_LIBRARY_PATH"))
    if ld_conf_dir.is_dir():
        for conf in sorted(ld_conf_dir.glob("*.conf")):
            for line in _read(str(conf)).splitlines():
                line = line.split("#", 1)[0].strip()
                if line and not line.startswith("include"):
                    dirs.append((line, str(conf)))
    out = []
    for path, origin in dirs:
        real = os.path.realpath(path)
        if real.startswith(str(root) + os.sep) or not os.path.isdir(real):
            continue
        libs = []
        for name in sorted(os.listdir(real)):
            if CUDA_STACK_LIBS.match(name):
                full = os.path.join(real, name)
                libs.append((name, None if os.path.islink(full) else soname(Path(full))))
        out.append(LibraryDir(path, origin, tuple(libs)))
    return out
