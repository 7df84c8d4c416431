"""The few imports lockguard keeps inside functions are engines only some runs need; the runs that
do not need them must not import them. packaging's requirement parser (it brings markers and tags,
about 15 ms) is imported only where requirements are validated or resolved, never by the plain
check (validate=False); tomlkit only where a file is written (lockfiles/pylock_write.py, not the
pylock.toml reader). The check is run the way tests/test_check_imports.py runs it."""

from __future__ import annotations

import subprocess
import sys

from tests.support.fuzz_env import site_of
from tests.test_check_imports import REPO, _imported, _modules_of_a_check

WRITING_AND_VALIDATING = (
    "packaging.requirements",
    "packaging.markers",
    "tomlkit",
    "lockguard.lockfiles.pylock_write",
)


def test_the_uncached_check_imports_neither_the_requirement_parser_nor_the_toml_writer(tmp_path):
    # --strict: the full rules (a plain check of the example's lock set, which proves itself,
    # reads no knowledge: tests/test_check_imports.py)
    modules, said = _modules_of_a_check(tmp_path, "check", "--no-cache", "--strict", code=1)
    assert "LG140" in said
    # it read both
    assert "lockguard.model.intent_parse" in modules and "lockguard.knowledge.schema" in modules
    assert not _imported(modules, WRITING_AND_VALIDATING)


def _modules_after(code: str, *args: str) -> set[str]:
    """The modules a fresh interpreter has imported after running `code` (sys.argv[1:] = args)."""
    done = subprocess.run(
        [sys.executable, "-c", code + "\nprint('\\n'.join(sorted(sys.modules)))", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_an_inventory_without_elf_libraries_does_not_import_pyelftools(venv, tmp_path):
    # pyelftools costs ~15 ms of a 0.35 s inventory; SONAMEs come from the scan memo or from
    # files that are ELF, and a `lib*.so*` that is not ELF needs no parser (bench/RESULTS.md,
    # "issue 31: cold resolve CPU and inventory")
    fake = site_of(venv) / "pkg" / "libfake.so.1"
    fake.parent.mkdir()
    fake.write_bytes(b"not an ELF file")
    (tmp_path / "ld.so.conf.d").mkdir()  # the machine's loader path may list real libraries
    modules = _modules_after(
        "import sys\nfrom pathlib import Path\n"
        "from lockguard.io.env.elf import soname\n"
        "from lockguard.io.env.prefix_scan import scan_prefix\n"
        "from lockguard.install.inventory import take_inventory\n"
        "assert soname(Path(sys.argv[1])) is None\n"
        "snap = scan_prefix(Path(sys.argv[2]), environ={}, ld_conf_dir=Path(sys.argv[3]))\n"
        "assert any(p.endswith('libfake.so.1') for p in snap.files)\n"
        "take_inventory(snap, None)",
        str(fake),
        str(venv),
        str(tmp_path / "ld.so.conf.d"),
    )
    assert "lockguard.io.env.prefix_scan" in modules
    assert not _imported(modules, ("elftools",))
    # an ELF file still has its SONAME read (the interpreter's own binary: ELF, no SONAME)
    assert "elftools.elf.elffile" in _modules_after(
        "import sys\nfrom pathlib import Path\nfrom lockguard.io.env.elf import soname\n"
        "assert soname(Path(sys.executable).resolve()) is None"
    )
