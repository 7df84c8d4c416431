"""lockfiles/formats.py: one registry of lock formats, which resolve, check, the lock paths and the
project files walk (issue 34 §2)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lockguard.check.snapshot import LockFile
from lockguard.lockfiles import formats
from lockguard.lockfiles.formats import BY_PIP_RANK, EXPORTS, FORMATS, kind_of
from lockguard.model.intent import CudaRequest, Intent, Outputs
from lockguard.model.lock_names import LOCK_NAMES, OUTPUT_NAMES
from lockguard.model.lock_paths import lock_paths
from lockguard.model.versions import PythonVersion


def test_every_lock_name_has_its_format_in_the_same_order():
    assert [f.name for f in FORMATS] == list(LOCK_NAMES)
    assert len({f.kind for f in FORMATS}) == len(FORMATS)
    assert {n.kind for n in OUTPUT_NAMES} == {f.kind for f in FORMATS}
    # requirements.lock is the first view of the pip pins, conda-lock.yml the last
    assert [f.kind for f in BY_PIP_RANK] == ["requirements", "pylock", "environment", "conda-lock"]


def _intent(**changes) -> Intent:
    base = {
        "python": PythonVersion(3, 11),
        "cuda": CudaRequest.none(),
        "platforms": ("linux-64", "linux-aarch64"),
        "pip": ("torch",),
        "outputs": Outputs(pylock="pylock.gpu.toml"),
    }
    base.update(changes)
    return Intent(**base)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {},
            [
                ("requirements.linux-64.lock", "requirements", "linux-64"),
                ("environment.linux-64.yml", "environment", "linux-64"),
                ("pylock.gpu-linux-64.toml", "pylock", "linux-64"),
                ("requirements.linux-aarch64.lock", "requirements", "linux-aarch64"),
                ("environment.linux-aarch64.yml", "environment", "linux-aarch64"),
                ("pylock.gpu-linux-aarch64.toml", "pylock", "linux-aarch64"),
                ("conda-lock.yml", "conda-lock", None),
            ],
        ),
        (
            {"platforms": ("linux-64",), "outputs": Outputs(pylock="pylock.toml")},
            [
                ("requirements.lock", "requirements", "linux-64"),
                ("environment.yml", "environment", "linux-64"),
                ("pylock.toml", "pylock", "linux-64"),
                ("conda-lock.yml", "conda-lock", None),
            ],
        ),
        (
            {"outputs": Outputs(pylock="pylock.toml")},
            [
                ("requirements.linux-64.lock", "requirements", "linux-64"),
                ("environment.linux-64.yml", "environment", "linux-64"),
                ("pylock.linux-64.toml", "pylock", "linux-64"),
                ("requirements.linux-aarch64.lock", "requirements", "linux-aarch64"),
                ("environment.linux-aarch64.yml", "environment", "linux-aarch64"),
                ("pylock.linux-aarch64.toml", "pylock", "linux-aarch64"),
                ("conda-lock.yml", "conda-lock", None),
            ],
        ),
    ],
)
def test_the_lock_paths_walk_the_names(changes, expected):
    assert lock_paths(_intent(**changes)) == expected


def test_a_pip_only_intent_asks_for_no_conda_side_file():
    intent = _intent(platforms=("linux-64",), outputs=Outputs(), channels=())
    assert intent.pip_only
    assert [k for _p, k, _pl in lock_paths(intent)] == ["requirements"]


def test_a_lock_file_gives_its_parsed_file_through_its_formats_accessor():
    text = "idna==3.6 \\\n    --hash=sha256:" + "a" * 64 + "\n"
    parsed = formats.REQUIREMENTS.parse(text)
    lock = LockFile("requirements.lock", text, "requirements", "linux-64", parsed=parsed)
    assert lock.format is formats.REQUIREMENTS
    assert lock.requirements is parsed
    assert (lock.environment, lock.conda_lock, lock.pylock) == (None, None, None)
    assert LockFile("environment.yml", None, "environment").environment is None


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("conda-lock.yml", "", "conda-lock"),
        ("pylock.gpu.toml", "", "pylock"),
        ("other.yml", "x:\npackage:\nmetadata:\n", "conda-lock"),
        ("env.yaml", "name: x\n", "environment"),
        ("lock.toml", "", "pylock"),
        ("requirements.linux-64.lock", "", "requirements"),
    ],
)
def test_a_files_kind_is_told_by_its_name_then_its_text(name, text, kind):
    assert kind_of(name, text) == kind


def test_the_registry_loads_no_format_reader_until_one_is_used():
    """A memo hit or a cached check reads no lock file: it must not pay for PyYAML or the TOML
    reader because it imported the registry."""
    code = (
        "import sys\n"
        "import lockguard.lockfiles.formats, lockguard.check.snapshot, lockguard.lockfiles.pins\n"
        "readers = ('yaml', 'tomllib', 'tomli', 'lockguard.lockfiles.conda_lock',\n"
        "    'lockguard.lockfiles.pylock', 'lockguard.lockfiles.requirements_lock')\n"
        "print(sorted(m for m in readers if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_export_formats_are_the_exports_choices():
    from lockguard.app.export_session import RENDERERS

    assert list(RENDERERS) == [f.key for f in EXPORTS] == ["cyclonedx"]
