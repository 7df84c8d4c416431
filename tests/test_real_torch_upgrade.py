"""The first release's failure, on the real thing (opt-in: `pytest -m network`, live PyPI, about 4
GB of wheels, minutes): a venv with PyPI's torch 1.13.1 (cu117, `nvidia-*-cu11` wheels that
share 126 paths with the cu12 family) upgraded to a torch 2.1.2 cu121 lock by clean-install must
end with a torch that imports and every locked file present, and restore must give back the old
tree byte for byte, and the same again from the caches. The offline tests rebuild this shape
from fixtures (test_install_transaction.py); this one keeps them honest against PyPI's own
wheels.

This machine caps torch through /etc/xdg/pip: PIP_CONFIG_FILE=/dev/null lifts the cap for the
pip runs here (never in CI, which does not run network tests)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.network

INTENT = """python = "3.10"
cuda = "12.1"
channels = []
pip = ["torch==2.1.2", "numpy<2"]
exclude-newer = "2024-03-01T00:00:00Z"
"""


def tree_hash(root: Path) -> str:
    """Paths, bytes, modes and link targets under root; lockguard's own state folder left out."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".lockguard")
        for name in sorted(dirs) + sorted(files):
            full = Path(folder, name)
            info = full.lstat()
            if full.is_symlink():
                item = f"L {full.relative_to(root)} {os.readlink(full)}"
            elif full.is_dir():
                item = f"D {full.relative_to(root)} {info.st_mode & 0o7777:o}"
            else:
                item = (
                    f"F {full.relative_to(root)} {info.st_mode & 0o7777:o} "
                    f"{hashlib.sha256(full.read_bytes()).hexdigest()}"
                )
            digest.update(item.encode() + b"\n")
    return digest.hexdigest()


def lockguard(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lockguard", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )


def torch_import(python: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def python310() -> str | None:
    """A Python 3.10 that runs (a pyenv shim on PATH may name one that is not active)."""
    candidates = [
        shutil.which("python3.10"),
        *map(str, Path.home().glob(".pyenv/versions/3.10*/bin/python3.10")),
    ]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 10))"],
            capture_output=True,
            text=True,
        )
        if probe.stdout.strip() == "True":
            return candidate
    return None


def test_a_real_cu11_torch_upgraded_to_a_cu12_lock_imports_and_restore_gives_the_old_tree_back(
    tmp_path,
):
    base = python310()
    if base is None:
        pytest.skip("torch 1.13.1 has no wheels for this Python: needs a Python 3.10")
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    venv = tmp_path / "venv"
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "torch==1.13.1", "numpy<2"],
        env=env,
        check=True,
        timeout=3600,
    )
    assert torch_import(python, env).stdout.startswith("1.13.1")
    before = tree_hash(venv)

    project = tmp_path / "project"
    project.mkdir()
    (project / "lockguard.toml").write_text(INTENT)
    intent = ["--intent", str(project / "lockguard.toml")]
    resolved = lockguard("resolve", *intent, env=env)
    assert resolved.returncode == 0, resolved.stderr

    installed = lockguard("clean-install", *intent, "--prefix", str(venv), "--yes", env=env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    # "installed" is a claim about effects: the import works and every locked file is there
    imported = torch_import(python, env)
    assert imported.returncode == 0 and imported.stdout.split() == ["2.1.2+cu121", "12.1"], (
        imported.stderr[-2000:]
    )
    site = next((venv / "lib").glob("python3.10/site-packages"))
    # the path both families install
    assert list((site / "nvidia" / "cudnn" / "lib").glob("libcudnn.so.8"))
    assert not list(site.glob("nvidia_*_cu11-*.dist-info"))
    checked = lockguard(
        "check", *intent, "--env", str(venv), "--verify-files", "--format", "json", env=env
    )
    report = json.loads(checked.stdout)
    errors = [f for f in report["data"]["findings"] if f["severity"] == "error"]
    # machine warnings (LG218) are allowed
    assert checked.returncode in (0, 1) and errors == [], errors

    restored = lockguard("restore", "--prefix", str(venv), env=env)
    assert restored.returncode == 0, restored.stderr
    assert tree_hash(venv) == before
    assert torch_import(python, env).stdout.startswith("1.13.1")

    # then again (issue 32): the files now come from lockguard's cache and uv's, and the same
    # upgrade and the same restore hold
    again = lockguard("clean-install", *intent, "--prefix", str(venv), "--yes", env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert torch_import(python, env).stdout.split() == ["2.1.2+cu121", "12.1"]
    assert not list(site.glob("nvidia_*_cu11-*.dist-info"))
    assert lockguard("restore", "--prefix", str(venv), env=env).returncode == 0
    assert tree_hash(venv) == before
