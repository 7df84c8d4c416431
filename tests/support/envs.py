"""Real virtual environments for tests: made once, copied per test, filled by real pip."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The target environments stand for a user's prefix that the tests' locks (python = "3.11") fit;
# when the tests themselves run on another Python (CI's 3.10 run), lockguard still manages a 3.11
# prefix.
ENV_PYTHON = (
    sys.executable
    if sys.version_info[:2] == (3, 11)
    else (shutil.which("python3.11") or sys.executable)
)


def _env_python_facts() -> tuple[str, str]:
    """(bytecode cache tag, "X.Y") of ENV_PYTHON: what its venvs compile and report."""
    if sys.executable == ENV_PYTHON:
        return sys.implementation.cache_tag, f"{sys.version_info[0]}.{sys.version_info[1]}"
    script = "import sys; print(sys.implementation.cache_tag, '%d.%d' % sys.version_info[:2])"
    tag, version = subprocess.run(
        [ENV_PYTHON, "-c", script], check=True, capture_output=True, text=True
    ).stdout.split()
    return tag, version


ENV_CACHE_TAG, ENV_PYTHON_VERSION = _env_python_facts()

PIP_ENV = {
    "PIP_CONFIG_FILE": os.devnull,
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_CACHE_DIR": "1",
}


def make_venv(path: Path, *, system_site: bool = False) -> Path:
    args = [ENV_PYTHON, "-m", "venv", str(path)]
    if system_site:
        args.insert(3, "--system-site-packages")
    subprocess.run(args, check=True, capture_output=True)
    return path


def copy_venv(template: Path, target: Path) -> Path:
    shutil.copytree(template, target, symlinks=True)
    cfg = target / "pyvenv.cfg"
    cfg.write_text(cfg.read_text().replace(str(template), str(target)))
    return target


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def pip_install(venv: Path, index_url: str, *requirements: str) -> None:
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--index-url",
            index_url,
            *requirements,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **PIP_ENV},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def tree_hashes(root: Path, skip: str = ".lockguard") -> dict[str, tuple[str, int]]:
    """Path, sha256 and mode of every file, folder and symlink under root (the state folder
    excluded, __pycache__ included): equal trees are byte- and mode-identical."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != skip]
        for name in dirs:
            full = Path(folder) / name
            if full.is_symlink():
                out[str(full.relative_to(root))] = ("->" + os.readlink(full), 0)
            else:
                out[str(full.relative_to(root)) + "/"] = ("dir", full.stat().st_mode & 0o7777)
        for name in files:
            full = Path(folder) / name
            relative = str(full.relative_to(root))
            if full.is_symlink():
                out[relative] = ("->" + os.readlink(full), 0)
            else:
                out[relative] = (
                    hashlib.sha256(full.read_bytes()).hexdigest(),
                    full.stat().st_mode & 0o7777,
                )
    return out


def compile_library(folder: Path, filename: str, soname: str) -> Path | None:
    """A real tiny ELF shared library with an SONAME (None when there is no C compiler)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "lib.c"
    source.write_text("int lockguard_test_symbol(void) { return 42; }\n")
    target = folder / filename
    subprocess.run(
        [cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target), str(source)],
        check=True,
    )
    source.unlink()
    return target
