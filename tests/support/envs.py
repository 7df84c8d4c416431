"""Real virtual environments for tests: made once, copied per test, filled by real pip."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PIP_ENV = {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}


def make_venv(path: Path, *, system_site: bool = False) -> Path:
    args = [sys.executable, "-m", "venv", str(path)]
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
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--index-url", index_url,
                           *requirements], capture_output=True, text=True, env={**os.environ, **PIP_ENV})
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
                out[relative] = (hashlib.sha256(full.read_bytes()).hexdigest(), full.stat().st_mode & 0o7777)
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
    subprocess.run([cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target), str(source)], check=True)
    source.unlink()
    return target
