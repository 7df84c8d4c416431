"""System CUDA facts, read without torch: /usr/local/cuda, CUDA_HOME and CUDA_PATH (where they lead,
the toolkit version from version.json / version.txt / `nvcc --version`), every nvcc on PATH, the
CUDA-stack libraries the loader can reach (loader_libraries.py), the host compiler, ninja,
/dev/shm; and the node's name. The slow parts (child processes) run side by side."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lockguard.errors import InputError
from lockguard.io.machine.loader_libraries import find_ldconfig, reachable_libraries
from lockguard.io.read import read_head
from lockguard.io.run import run_bounded
from lockguard.model.system_facts import Compiler, Nvcc, SystemFacts, Toolkit

ENV_NODE = "LOCKGUARD_NODE"
# seconds for nvcc --version, gcc -dumpfullversion, ldconfig -p, the version helper
TOOL_TIMEOUT = 10.0
_RELEASE = re.compile(r"release (\d+\.\d+)")
_FULL = re.compile(r"\bV(\d+\.\d+(?:\.\d+)?)")
_VERSION_TXT = re.compile(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)?)")


def node_identity(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(name, where it came from): LOCKGUARD_NODE when set (a scheduler can set it from
    SLURMD_NODENAME or a pod's spec.nodeName), else the host name."""
    environ = os.environ if environ is None else environ
    name = environ.get(ENV_NODE, "").strip()
    if name:
        return name, ENV_NODE
    return socket.gethostname() or "unknown", "hostname"


def gather_system(
    environ: Mapping[str, str] | None = None,
    *,
    usr_local_cuda: Path = Path("/usr/local/cuda"),
    ld_conf_dir: Path = Path("/etc/ld.so.conf.d"),
    ldconfig: str | None = "auto",
    dev_shm: Path = Path("/dev/shm"),
    timeout: float = TOOL_TIMEOUT,
) -> SystemFacts:
    environ = dict(os.environ if environ is None else environ)
    if ldconfig == "auto":
        ldconfig = find_ldconfig()
    versions = _NvccVersions(timeout)
    with ThreadPoolExecutor(max_workers=6) as pool:  # all the child processes at once
        libraries = pool.submit(
            reachable_libraries,
            environ,
            ld_conf_dir=ld_conf_dir,
            ldconfig=ldconfig,
            timeout=timeout,
        )
        gcc = pool.submit(_compiler, environ, timeout)
        ninja = pool.submit(_ninja, environ, timeout)
        named = [("/usr/local/cuda", str(usr_local_cuda))]
        named += [(key, environ[key]) for key in ("CUDA_HOME", "CUDA_PATH") if environ.get(key)]
        on_path = _nvcc_on_path(environ)
        for path in on_path + [os.path.join(p, "bin", "nvcc") for _via, p in named]:
            if os.access(path, os.X_OK):
                versions.start(pool, path)
        toolkits = tuple(t for t in (_toolkit(via, path, versions) for via, path in named) if t)
        nvccs = tuple(_nvcc(path, versions) for path in on_path)
        libs, problems = libraries.result()
        facts = SystemFacts(
            toolkits=toolkits,
            nvcc=nvccs,
            libraries=tuple(libs),
            gcc=gcc.result(),
            ninja=ninja.result(),
            dev_shm_bytes=_shm(dev_shm),
            problems=tuple(problems + versions.problems),
        )
    return facts


class _NvccVersions:
    """`nvcc --version` once per file, started early and read when needed."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.futures: dict = {}
        self.problems: list[str] = []

    def start(self, pool: ThreadPoolExecutor, path: str) -> None:
        if path not in self.futures:
            self.futures[path] = pool.submit(
                run_bounded, [path, "--version"], timeout=self.timeout, what=f"{path} --version"
            )

    def get(self, path: str) -> tuple[str | None, str | None, str | None]:
        """(full version "13.0.88", release "13.0", problem)."""
        future = self.futures.get(path)
        if future is None:
            return None, None, f"{path} is not executable"
        done = future.result()
        text = done.stdout + done.stderr
        release, full = _RELEASE.search(text), _FULL.search(text)
        if not release:
            problem = (
                done.problem
                or f"`{path} --version` printed no 'release X.Y' (exit {done.returncode})"
            )
            if problem not in self.problems:
                self.problems.append(problem)
            return None, None, problem
        return (full.group(1) if full else release.group(1)), release.group(1), None


def _nvcc_on_path(environ: Mapping[str, str]) -> list[str]:
    out = []
    for folder in environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, "nvcc") if folder else ""
        if (
            candidate
            and candidate not in out
            and os.path.isfile(candidate)
            and os.access(candidate, os.X_OK)
        ):
            out.append(candidate)
    return out


def _nvcc(path: str, versions: _NvccVersions) -> Nvcc:
    full, release, problem = versions.get(path)
    return Nvcc(
        path=path, real=os.path.realpath(path), version=full, release=release, problem=problem
    )


def _toolkit(via: str, path: str, versions: _NvccVersions) -> Toolkit | None:
    if not os.path.lexists(path):
        return None if via == "/usr/local/cuda" else Toolkit(via=via, path=path)
    target = os.path.realpath(path)
    if not os.path.isdir(target):
        return Toolkit(via=via, path=path)
    candidate = os.path.join(path, "bin", "nvcc")
    nvcc = candidate if os.access(candidate, os.X_OK) else None
    version, source = _version_file(Path(target))
    if version is None and nvcc:
        version, _release, _problem = versions.get(nvcc)
        source = "nvcc --version" if version else None
    return Toolkit(
        via=via, path=path, target=target, version=version, version_source=source, nvcc=nvcc
    )


def _version_file(folder: Path) -> tuple[str | None, str | None]:
    """version.json (CUDA >= 11.1: {"cuda": {"version": "12.1.1"}}), else version.txt (older)."""
    try:
        data = json.loads(
            read_head(folder / "version.json", 1 << 20).decode("utf-8", errors="replace")
        )
        version = (
            data.get("cuda", {}).get("version")
            if isinstance(data, dict) and isinstance(data.get("cuda"), dict)
            else None
        )
        if isinstance(version, str) and re.fullmatch(r"\d+\.\d+(\.\d+)*", version):
            return version, "version.json"
    except (OSError, ValueError, InputError):
        pass
    try:
        match = _VERSION_TXT.search(
            read_head(folder / "version.txt", 4096).decode("utf-8", errors="replace")
        )
        if match:
            return match.group(1), "version.txt"
    except (OSError, InputError):
        pass
    return None, None


def _compiler(environ: Mapping[str, str], timeout: float) -> Compiler | None:
    """The C++ compiler an extension build uses: $CXX, else g++, else gcc on PATH."""
    path_env = environ.get("PATH", "")
    chosen = None
    cxx = environ.get("CXX", "").split()
    if cxx:
        chosen = cxx[0] if os.sep in cxx[0] else shutil.which(cxx[0], path=path_env)
    chosen = chosen or shutil.which("g++", path=path_env) or shutil.which("gcc", path=path_env)
    if not chosen:
        return None
    for flag in ("-dumpfullversion", "-dumpversion"):
        done = run_bounded([chosen, flag], timeout=timeout, what=f"{chosen} {flag}")
        text = done.stdout.strip().splitlines()[0] if done.ok and done.stdout.strip() else ""
        if re.fullmatch(r"\d+(\.\d+)*", text):
            return Compiler(chosen, text)
    return Compiler(chosen, None)


def _ninja(environ: Mapping[str, str], timeout: float) -> str | None:
    ninja = shutil.which("ninja", path=environ.get("PATH", ""))
    if not ninja:
        return None
    done = run_bounded([ninja, "--version"], timeout=timeout, what="ninja --version")
    return done.stdout.strip()[:40] or None if done.ok else None


def _shm(path: Path) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_frsize * st.f_blocks
