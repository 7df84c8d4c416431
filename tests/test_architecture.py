"""The layering of DESIGN.md: only lockguard.io touches the outside world. The pure packages
(model, knowledge, resolve, check, install, doctor's checks, lockfiles) never import it, nor the
third-party clients io/ wraps, at module level or inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lockguard"
PURE = ["model", "knowledge", "resolve", "check", "install", "lockfiles", "doctor", "fleet", "adopt"]
OUTSIDE_WORLD = ("lockguard.io", "httpx", "rattler", "pynvml", "subprocess", "socket", "urllib.request")
# the doctor's probe is a script run by the target interpreter (stdlib only), not an import
SCRIPTS = {PACKAGE / "doctor" / "probe.py"}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.lineno, node.module))
    return out


@pytest.mark.parametrize("package", PURE)
def test_pure_packages_do_not_touch_the_outside_world(package):
    folder = PACKAGE / package
    if not folder.is_dir():
        pytest.skip(f"no lockguard/{package} yet")
    offenders = []
    for path in sorted(folder.rglob("*.py")):
        if path in SCRIPTS:
            continue
        for line, module in _imports(path):
            if any(module == banned or module.startswith(banned + ".") for banned in OUTSIDE_WORLD):
                offenders.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert not offenders, "\n".join(offenders)


def test_the_check_detects_an_offender(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from lockguard.io.index.http import Http\n")
    assert _imports(bad) == [(2, "lockguard.io.index.http")]
