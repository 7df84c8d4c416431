"""Real ELF shared libraries compiled with gcc for the doctor's tests: a libnccl.so.2 whose
ncclGetVersion answers, a libcudnn whose cudnnGetVersion answers (an SONAME and a version, as the
real ones have), and fake executables (nvcc, a python that hangs or prints garbage)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def compile_c_library(folder: Path, filename: str, soname: str, source: str) -> Path | None:
    """None when there is no C compiler."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / f"{filename}.c"
    src.write_text(source)
    target = folder / filename
    subprocess.run(
        [cc, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target), str(src)], check=True
    )
    src.unlink()
    return target


def fake_nccl(folder: Path, code: int = 21903, filename: str = "libnccl.so.2") -> Path | None:
    """libnccl.so.2 (SONAME libnccl.so.2) whose ncclGetVersion reports `code` (21903 = 2.19.3)."""
    return compile_c_library(
        folder,
        filename,
        "libnccl.so.2",
        f"int ncclGetVersion(int *version) {{ *version = {code}; return 0; }}\n",
    )


def fake_cudnn(folder: Path, code: int = 8600, major: int = 8) -> Path | None:
    return compile_c_library(
        folder,
        f"libcudnn.so.{major}",
        f"libcudnn.so.{major}",
        f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {code}; }}\n",
    )


def script(path: Path, body: str) -> Path:
    """An executable shell script (a fake nvcc, a python that misbehaves)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def fake_nvcc(bin_dir: Path, release: str, full: str) -> Path:
    return script(
        bin_dir / "nvcc",
        f"""echo 'nvcc: NVIDIA (R) Cuda compiler driver'
echo 'Cuda compilation tools, release {release}, V{full}'
""",
    )
