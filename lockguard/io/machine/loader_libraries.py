"""The CUDA, cuDNN, NCCL and cuBLAS libraries the dynamic loader can reach outside any environment:
the directories of LD_LIBRARY_PATH, the loader's cache (`ldconfig -p`) and the directories named in
/etc/ld.so.conf.d, in that order (the loader's own order; a cache entry is what ld.so.conf.d gives
once ldconfig has run). Each with its SONAME and its version: the library's own call
(ncclGetVersion, cudnnGetVersion, ...), both read in a helper process (library_probe.py), else the
file name."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys

from lockguard.errors import InputError
from lockguard.io.read import read_head
from lockguard.io.run import run_bounded
from lockguard.model.system_facts import VERSION_CALLS, SharedLibrary, decode_library_version
from lockguard.model.wording import counted

FAMILY_FILE = re.compile(r"^lib(cudart|cublasLt|cublas|cudnn|nccl)\.so(\.\d+)*$")
_CACHE_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")
HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "library_probe.py")
LDCONFIG_CANDIDATES = ("/sbin/ldconfig", "/usr/sbin/ldconfig")


def find_ldconfig() -> str | None:
    return shutil.which("ldconfig") or next(
        (p for p in LDCONFIG_CANDIDATES if os.access(p, os.X_OK)), None
    )


def reachable_libraries(
    environ: dict,
    *,
    ld_conf_dir: str | os.PathLike = "/etc/ld.so.conf.d",
    ldconfig: str | None = None,
    timeout: float = 10.0,
) -> tuple[list[SharedLibrary], list[str]]:
    """The libraries in loader order, one entry per file (the first way to reach it wins), and
    what could not be read."""
    problems: list[str] = []
    found: dict[str, dict] = {}  # real path -> entry
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":"):
        if entry:
            _scan_dir(entry, "LD_LIBRARY_PATH", found)
    if ldconfig:
        done = run_bounded([ldconfig, "-p"], timeout=timeout, what="ldconfig -p")
        if done.ok:
            for line in done.stdout.splitlines():
                match = _CACHE_LINE.match(line)
                if match and FAMILY_FILE.match(match.group(1)) and _host_arch(match.group(2)):
                    _add(found, match.group(3), match.group(1), "ldconfig cache")
        else:
            problems.append(done.problem or f"ldconfig -p failed (exit {done.returncode})")
    for folder, conf in _conf_dirs(ld_conf_dir):
        _scan_dir(folder, conf, found)
    entries = list(found.values())
    answers, problem = _ask_libraries(entries, timeout)
    if problem:
        problems.append(problem)
    libraries = []
    for item in entries:
        answer = answers.get(item["real"], {})
        item["soname"] = answer.get("soname") if isinstance(answer.get("soname"), str) else None
        if item["soname"] in item["names"]:  # the loader opens the SONAME-named file: show that one
            item["path"] = os.path.join(os.path.dirname(item["path"]), item["soname"])
        code = answer.get("code")
        version = decode_library_version(item["family"], code) if code is not None else None
        source = VERSION_CALLS[item["family"]] if version else None
        if version is None:
            version = _file_name_version(item["names"] + [os.path.basename(item["real"])])
            source = "file name" if version else None
        libraries.append(
            SharedLibrary(
                item["family"],
                item["path"],
                tuple(item["names"]),
                item["real"],
                item["via"],
                item.get("soname"),
                version,
                source,
            )
        )
    return libraries, problems


def _host_arch(flags: str) -> bool:
    # the cache lists every ABI it knows ("libc6,x86-64", "libc6,AArch64", "libc6,64bit"); a
    # 32-bit copy is not one a 64-bit process loads
    return sys.maxsize <= 2**32 or "64" in flags


def _scan_dir(folder: str, via: str, found: dict) -> None:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if FAMILY_FILE.match(name):
            _add(found, os.path.join(folder, name), name, via)


def _add(found: dict, path: str, name: str, via: str) -> None:
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return
    matched = FAMILY_FILE.match(name)
    if matched is None:  # callers pass names of a family only
        return
    family = matched.group(1)
    entry = found.get(real)
    if entry is None:
        found[real] = {"family": family, "path": path, "names": [name], "real": real, "via": via}
    elif os.path.dirname(entry["path"]) == os.path.dirname(path) and name not in entry["names"]:
        entry["names"].append(name)
        entry["names"].sort()


def _conf_dirs(ld_conf_dir: str | os.PathLike) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    try:
        confs = sorted(
            os.path.join(ld_conf_dir, n) for n in os.listdir(ld_conf_dir) if n.endswith(".conf")
        )
    except OSError:
        return out
    for conf in confs:
        try:
            text = read_head(conf, 65536).decode("utf-8", errors="replace")
        except (OSError, InputError):  # gone, unreadable, or not a regular file: not the loader's
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("/"):
                out.append((line, conf))
    return out


def _ask_libraries(entries: list[dict], timeout: float) -> tuple[dict[str, dict], str | None]:
    """real path -> {"soname", "code"}: read in a helper process (a library that crashes on load
    takes the helper down, not doctor; the rest are asked again)."""
    pending = [(item["family"], item["real"]) for item in entries]
    answers: dict[str, dict] = {}
    problem = None
    while pending:
        argv = [sys.executable, "-I", HELPER, *(f"{f}:{p}" for f, p in pending)]
        done = run_bounded(argv, timeout=timeout, what="reading library versions")
        for line in done.stdout.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                answers[item["path"]] = item
        pending = [(fam, path) for fam, path in pending if path not in answers]
        if done.returncode is None:
            problem = done.problem
            break
        if done.returncode == 0 or done.timed_out or not pending:
            if pending:
                problem = done.problem or (
                    "could not read the versions of "
                    f"{counted(len(pending), 'library', 'libraries')}"
                )
            break
        problem = (
            f"loading {pending[0][1]} killed the helper ({_how(done.returncode)}); "
            "its version is from its file name"
        )
        pending = pending[1:]
    return answers, problem


def _how(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


def _file_name_version(names: list[str]) -> str | None:
    """libnccl.so.2.18.1 -> 2.18.1; a bare major (libnccl.so.2) is no version."""
    best = None
    for name in names:
        tail = name.split(".so.", 1)[1] if ".so." in name else ""
        if tail.count(".") >= 1 and (best is None or tail.count(".") > best.count(".")):
            best = tail
    return best
