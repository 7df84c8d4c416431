"""The test suite never runs in the user's cache (issue 22, item 5): a fuzz module and the check
module, whose module-scoped fixtures resolve against local index servers that stop when the module
ends, pass in one pytest session in both orders, and the user's cache folder (HOME's, as
platformdirs finds it when nothing overrides it) is left exactly as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FUZZ = "tests/test_fuzz.py::test_the_corpus_is_wide_and_distinct"
CHECK = "tests/test_check.py::test_a_fresh_lock_is_clean"


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return (
        {
            str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*")
            if p.is_file()
        }
        if folder.exists()
        else {}
    )


def _session(home: Path, *tests: str) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOCKGUARD_", "XDG_", "RAY_", "PYTEST_")) and k != "PYTHONPATH"
    }
    env["HOME"] = str(home)  # the user's cache: ~/.cache/lockguard, as platformdirs says
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.parametrize(
    "order", [(FUZZ, CHECK), (CHECK, FUZZ)], ids=["fuzz-then-check", "check-then-fuzz"]
)
def test_a_fuzz_module_and_the_check_module_share_a_session_and_leave_the_users_cache_alone(
    tmp_path, order
):
    home = tmp_path / "home"
    user_cache = home / ".cache" / "lockguard"
    user_cache.mkdir(parents=True)
    (user_cache / "kept-by-an-earlier-run").write_text("the user's own")
    before = _tree(home)
    done = _session(home, *order)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
    assert _tree(home) == before  # nothing written to, or removed from, the user's cache
