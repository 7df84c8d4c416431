"""What `lockguard check` imports, and what lockguard imports at all: a cached check is answered
before the rules, click and the resolver are imported; an uncached one never imports the resolver
or the network stack; no module of lockguard imports a private CPython module (`_sha2`,
`_datetime`, ...), whose names and presence change between interpreters.
No timings here: bench/ measures; these tests pin what is imported."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gpu-training"
# what a check never needs: the resolvers, the conda solver, the HTTP client
RESOLVER_AND_NETWORK = ("rattler", "httpx", "resolvelib", "lockguard.resolve", "lockguard.io.index")


def _modules_of_a_check(tmp_path: Path, *args: str, code: int = 0) -> tuple[set[str], str]:
    """The modules `lockguard check` has imported when it exits, and what it printed.

    Run as an installed (not editable) lockguard is: without `site` (-S), whose .pth processing
    would run the editable install's finder, which imports more for every interpreter; the
    repository and site-packages are put on sys.path by hand instead, as the finder would."""
    script = (
        "import sys, atexit\n"
        f"sys.path[:0] = [{str(REPO)!r}]\n"
        f"sys.path.append({sysconfig.get_paths()['purelib']!r})\n"
        f"sys.path.append({sysconfig.get_paths()['platlib']!r})\n"
        # constraints/ is lockguard.constraints
        f"import lockguard; lockguard.__path__.append({str(REPO)!r})\n"
        "out = sys.argv[1]\n"
        "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
        "sys.argv = ['lockguard'] + sys.argv[2:]\n"
        "from lockguard.start import main\nmain()\n"
    )
    out = tmp_path / "modules.txt"
    env = {**os.environ, "LOCKGUARD_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-S", "-c", script, str(out), *args],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == code, done.stdout + done.stderr
    return set(out.read_text().split()), done.stdout


def _imported(modules: set[str], names) -> list[str]:
    """The modules of `modules` that are one of `names` or inside one of them."""
    return sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names))


def test_the_uncached_check_imports_neither_the_resolver_nor_the_network_stack(tmp_path):
    modules, said = _modules_of_a_check(tmp_path, "check", "--no-cache", "--strict", code=1)
    assert "LG140" in said  # the example's conda side is pinned from knowledge
    assert "lockguard.check.static" in modules  # --strict: it did run the rules
    assert not _imported(modules, RESOLVER_AND_NETWORK)


def test_an_uncached_check_of_a_proven_lock_set_runs_no_rules(tmp_path):
    """The example's lock files prove themselves (issue 34 §3): the uncached check reads, hashes
    and compares, before click; no YAML, no packaging rules, no rule module."""
    modules, said = _modules_of_a_check(tmp_path, "check", "--no-cache")
    assert "no findings" in said
    assert not _imported(
        modules,
        (*RESOLVER_AND_NETWORK, "lockguard.check.static", "lockguard.knowledge", "click", "yaml"),
    )


def test_a_cached_check_imports_no_rules_at_all(tmp_path):
    """Nor click, nor the knowledge: the check result cache answers before anything parses. Nor
    typing or dataclasses: each costs a third of Python's start-up, on the path every commit takes
    (the pre-commit hook). Nor hashlib (a sixth of it): the entry compares bytes, hashes nothing."""
    _modules_of_a_check(tmp_path, "check")
    modules, said = _modules_of_a_check(tmp_path, "check")
    assert "no findings" in said
    assert not _imported(
        modules,
        (
            *RESOLVER_AND_NETWORK,
            "lockguard.check",
            "lockguard.knowledge",
            "click",
            "packaging",
            "yaml",
            "tomllib",
            "lockguard.cli.commands",
            "typing",
            "dataclasses",
            "hashlib",
        ),
    )


def _private_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of each import of a private top-level module (`_sha2`, `_datetime`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [
            (node.lineno, name) for name in names if name.startswith("_") and name != "__future__"
        ]
    return found


def test_no_module_of_lockguard_imports_a_private_cpython_module():
    found = {
        f"{path.relative_to(REPO)}:{line}": name
        for path in sorted((REPO / "lockguard").rglob("*.py"))
        for line, name in _private_imports(path.read_text())
    }
    assert found == {}


def test_the_private_import_finder_sees_every_spelling():
    source = (
        "import _sha2\nfrom _datetime import date\ntry:\n    import _sha256 as s\n"
        "except ImportError:\n    pass\ndef f():\n    from _thread import get_ident\n"
        "from __future__ import annotations\n"
        "from . import _private\nimport os._x\n"
    )
    assert _private_imports(source) == [
        (1, "_sha2"),
        (2, "_datetime"),
        (4, "_sha256"),
        (8, "_thread"),
    ]
