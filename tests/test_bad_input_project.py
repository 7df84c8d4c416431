"""Bad and hostile input in the project's own files (issue: bad input, hostile input and faults):
the intent, the lock files, and where resolve writes. Each example of the issue has its own test;
tests/test_fuzz.py runs the wider corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lockguard.lockfiles.headers import PLACEHOLDER, seal
from tests.support.envs import tree_hashes
from tests.support.locked import copy_project, edit

REPO = Path(__file__).resolve().parents[1]


def reseal(path: Path) -> None:
    """Recompute a lock file's body hash, as a tool that rewrote it would."""
    import re

    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    text = re.sub(
        r"(lockguard-body-hash: sha256:)[0-9a-f]{64}",
        lambda m: m.group(1) + PLACEHOLDER,
        text,
        count=1,
    )
    path.write_text(seal(text), encoding="utf-8", errors="surrogateescape")


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """A pip+conda (knowledge-only) project locked once against the local index."""
    from tests.support.world import locked_mixed_project, running_world

    root = tmp_path_factory.mktemp("bad-input")
    with running_world(root) as world:
        yield world, locked_mixed_project(world, root / "template")


@pytest.fixture
def project(locked, tmp_path) -> Path:
    return copy_project(locked[1], tmp_path / "project")


def check(lg, project: Path, *args: str):
    return lg("check", "--intent", str(project / "lockguard.toml"), "--no-cache", *args)


def resolve(lg, project: Path, *args: str):
    return lg("resolve", "--intent", str(project / "lockguard.toml"), *args)


def set_outputs(project: Path, **outputs: str) -> None:
    text = (project / "lockguard.toml").read_text()
    lines = "\n".join(f"{k.replace('_', '-')} = {json.dumps(v)}" for k, v in outputs.items())
    (project / "lockguard.toml").write_text(text + f"\n[outputs]\n{lines}\n")


def assert_bad_input(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "Traceback" not in result.output and "internal error" not in result.output
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


# -- where resolve writes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, why",
    [
        (".git/config", "inside .git/"),
        ("../outside.lock", "leaves the project folder"),
        ("/tmp/lockguard-abs.lock", "not a path relative"),
        ("~/lockguard-home.lock", "not a path relative"),
        ("lockguard.toml", "would overwrite lockguard.toml"),
        ("pyproject.toml", "would overwrite pyproject.toml"),
        ("locks/../../x.lock", "leaves the project folder"),
    ],
)
def test_outputs_outside_the_project_are_refused_before_anything_is_written(
    project, lg, value, why
):
    set_outputs(project, requirements=value)
    before = tree_hashes(project.parent)
    result = resolve(lg, project)
    assert_bad_input(result, "outputs.requirements", why, "lockguard.toml:")
    assert tree_hashes(project.parent) == before


def test_an_output_symlinked_out_of_the_project_is_not_written_through(project, lg, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (project / "requirements.lock").unlink()
    os.symlink(victim, project / "requirements.lock")
    before = tree_hashes(project)
    result = resolve(lg, project)
    assert_bad_input(result, "outside the project folder")
    assert victim.read_text() == "precious\n" and tree_hashes(project) == before


def test_two_outputs_naming_one_file_are_refused(project, lg):
    original = (project / "lockguard.toml").read_text()
    set_outputs(project, environment="locks.yml", conda_lock="locks.yml")
    result = resolve(lg, project)
    assert_bad_input(result, "outputs.conda-lock", "same file as outputs.environment")
    (project / "lockguard.toml").write_text(original)
    # a case-insensitive file system
    set_outputs(project, environment="Env.yml", conda_lock="env.yml")
    assert_bad_input(resolve(lg, project), "same file")


def test_per_platform_names_that_collide_are_refused(project, lg):
    text = (
        (project / "lockguard.toml")
        .read_text()
        .replace('platforms = ["linux-64"]', 'platforms = ["linux-64", "linux-aarch64"]')
    )
    (project / "lockguard.toml").write_text(
        text + '\n[outputs]\nenvironment = "x.yml"\nconda-lock = "x.linux-64.yml"\n'
    )
    result = resolve(lg, project)
    assert_bad_input(result, "x.linux-64.yml")
    assert "?" not in result.stderr.split("\n")[0]


def test_an_output_that_is_a_folder_changes_no_lock_file(project, lg):
    (project / "conda-lock.yml").unlink()
    (project / "conda-lock.yml").mkdir()
    edit(project / "lockguard.toml", '"numpy"]', '"numpy", "hjson"]')  # the other two would change
    before = tree_hashes(project)
    result = resolve(lg, project)
    assert_bad_input(result, "conda-lock.yml", "folder")
    assert tree_hashes(project) == before  # all three change together or none does


def test_a_rename_that_fails_midway_puts_the_earlier_files_back(tmp_path, monkeypatch):
    from lockguard.io.project import files as files_module

    targets = {tmp_path / name: f"new {name}\n" for name in ("a.lock", "b.yml", "c.yml")}
    for path in targets:
        path.write_text(f"old {path.name}\n")
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if str(dst).endswith("c.yml") and not str(src).endswith(".old"):
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(files_module.os, "replace", failing_replace)
    from lockguard.errors import InputError

    with pytest.raises(InputError, match="no file was changed"):
        files_module.write_all_atomic(targets, root=tmp_path)
    assert {p.name: p.read_text() for p in targets} == {p.name: f"old {p.name}\n" for p in targets}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.lock",
        "b.yml",
        "c.yml",
    ]  # no staged leftovers


# -- lock files that are not what lockguard wrote -------------------------------------------------


def test_a_pin_listed_twice_and_resealed_is_rejected(project, lg):
    lock = project / "requirements.lock"
    text = lock.read_text()
    entry = text[
        text.index("jinja2==") : text.index("\n", text.index("# via", text.index("jinja2==")))
    ]
    lock.write_text(text + entry + "\n")
    reseal(lock)
    result = check(lg, project)
    assert_bad_input(result, "requirements.lock:", "jinja2 is pinned twice")


@pytest.mark.parametrize("name", ["requirements.lock", "environment.yml", "conda-lock.yml"])
def test_a_lock_file_that_is_not_utf8_names_the_line(project, lg, name):
    path = project / name
    lines = path.read_bytes().split(b"\n")
    lines[9] = lines[9] + b"\xff\xfe"
    path.write_bytes(b"\n".join(lines))
    result = check(lg, project)
    assert_bad_input(result, name, "not UTF-8", "line 10")


@pytest.mark.parametrize(
    "body, needle",
    [
        ("- just\n- a list\n", "is a list, not a conda-lock mapping"),
        ("just a scalar\n", "is a string"),
        ("version: 1\npackage:\n  name: jinja2\n", "`package` is a mapping"),
        ("version: 1\npackage:\n- jinja2\n- numpy\n", "package entry 1 is a string"),
        (
            (
                "version: 1\npackage:\n- name: 12\n  manager: pip\n"
                "  platform: linux-64\n  version: 1\n"
            ),
            "no name",
        ),
        ("version: 1\nversion: 2\npackage: []\n", "duplicate key 'version'"),
        ("version: 1\npackage: [\n", "not valid YAML"),
    ],
)
def test_conda_lock_of_the_wrong_shape_is_bad_input(project, lg, body, needle):
    path = project / "conda-lock.yml"
    head = "".join(
        line for line in path.read_text().splitlines(keepends=True) if line.startswith("#")
    )
    path.write_text(head + body)
    reseal(path)
    assert_bad_input(check(lg, project), "conda-lock.yml", needle)


@pytest.mark.parametrize(
    "name, old, new",
    [
        ("requirements.lock", "jinja2==1.0", "jinja2  ==1.0"),
        ("requirements.lock", "    # via", "   # via"),
        ("environment.yml", "  - pip:", "  - pip:  # the pip side"),
        ("environment.yml", "dependencies:", "dependencies: [unclosed"),
        ("conda-lock.yml", "  manager: pip", "  manager: [pip"),
    ],
)
def test_a_resealed_file_with_odd_spacing_or_invalid_yaml_is_rejected(project, lg, name, old, new):
    edit(project / name, old, new, reseal=True)
    result = check(lg, project)
    assert_bad_input(result, name)


def _check_in_a_child(project) -> subprocess.CompletedProcess:
    """`lockguard check --no-cache` of the project in a process of its own, killed after 60 s: a
    read that hangs fails the test instead of the run."""
    argv = [sys.executable, "-m", "lockguard", "check", "--no-cache"]
    return subprocess.run(
        [*argv, "--intent", str(project / "lockguard.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_header_padded_with_spaces_is_read_in_linear_time(project):
    lock = project / "requirements.lock"
    text = lock.read_text().replace(
        "# lockguard-version: ", "# lockguard-version: " + " " * 200_000, 1
    )
    lock.write_text(text)
    done = _check_in_a_child(project)
    assert done.returncode == 1 and "LG102" in done.stdout  # answered (quickly), as a hand edit


@pytest.mark.parametrize("which", ["intent", "lock"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_special_files_are_refused_without_hanging(project, which, kind):
    target = project / ("lockguard.toml" if which == "intent" else "requirements.lock")
    if which == "intent":
        (project / "real.toml").write_text(target.read_text())
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", target)
    else:
        target.mkdir()
    done = _check_in_a_child(project)
    assert done.returncode == 2, done.stderr
    assert target.name in done.stderr and "Traceback" not in done.stderr
    assert {"fifo": "FIFO", "dev-zero": "device", "folder": "folder"}[kind] in done.stderr


# -- the intent -----------------------------------------------------------------------------------


def test_lockguard_toml_next_to_an_invalid_tool_lockguard_is_rejected(project, lg, monkeypatch):
    monkeypatch.chdir(project)
    (project / "pyproject.toml").write_text('[tool.lockguard]\npython = "3.11"\ncdua = "12.1"\n')
    result = lg("check", "--no-cache")
    assert_bad_input(result, "pyproject.toml:3", "cdua", "lockguard.toml is the intent in use")


def test_lockguard_toml_next_to_a_valid_tool_lockguard_says_which_is_used(project, lg, monkeypatch):
    monkeypatch.chdir(project)
    (project / "pyproject.toml").write_text('[tool.lockguard]\npython = "3.11"\ncuda = "12.1"\n')
    result = lg("check")  # the cached path must say it too
    assert result.exit_code == 0, result.output
    assert (
        "using lockguard.toml; the [tool.lockguard] table in pyproject.toml is ignored"
        in result.stderr
    )
    assert "ignored" in lg("check").stderr


@pytest.mark.parametrize(
    "value, needle",
    [
        ('"1970-01-01T00:00:00Z"', "before any package index served wheels"),
        ('"2999-01-01T00:00:00Z"', "is in the future"),
    ],
)
def test_exclude_newer_far_in_the_past_or_future_is_refused(project, lg, value, needle):
    (project / "lockguard.toml").write_text(
        (project / "lockguard.toml").read_text() + f"exclude-newer = {value}\n"
    )
    assert_bad_input(resolve(lg, project), "exclude-newer", needle, "lockguard.toml:")


def test_a_huge_value_is_not_echoed_whole(project, lg):
    (project / "lockguard.toml").write_text('python = "3.11"\ncuda = "' + "x" * 1_000_000 + '"\n')
    result = check(lg, project)
    assert_bad_input(result, "lockguard.toml:2", "1,000,000 characters")
    assert len(result.stderr) < 2000


def test_an_unclosed_array_names_the_line_it_opened_on(project, lg):
    (project / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "12.1"\npip = ["jinja2",\n  "numpy"\nchannels = []\n'
    )
    result = check(lg, project)
    assert_bad_input(result, "lockguard.toml:3", "opened on line 3")


def test_an_invalid_requirement_is_named_by_check_not_reported_as_a_missing_lock(project, lg):
    edit(project / "lockguard.toml", '"jinja2"', '"torch==="')
    result = check(lg, project)
    assert_bad_input(result, "lockguard.toml:", "torch===", "not a valid requirement")
    assert "LG100" not in result.output


# -- LG102 names what changed ---------------------------------------------------------------------


def test_lg102_names_the_changed_pin_from_lockguards_own_copy(project, lg):
    # lockguard keeps a copy of what it writes (this test's cache)
    assert resolve(lg, project).exit_code == 0
    edit(project / "requirements.lock", "numpy==2.0.0", "numpy==1.26.4")
    out = json.loads(check(lg, project, "--format", "json").stdout)["data"]["findings"]
    (finding,) = [f for f in out if f["code"] == "LG102"]
    assert "numpy: lockguard wrote 2.0.0, the file has 1.26.4" in finding["message"]
    assert finding["line"] == next(
        i
        for i, line in enumerate((project / "requirements.lock").read_text().splitlines(), 1)
        if line.startswith("numpy==")
    )


def test_lg102_names_a_changed_line_outside_the_pins(project, lg):
    assert resolve(lg, project).exit_code == 0
    edit(project / "environment.yml", "name: lockguard", "name: renamed")
    (finding,) = [
        f
        for f in json.loads(check(lg, project, "--format", "json").stdout)["data"]["findings"]
        if f["code"] == "LG102"
    ]
    assert "'name: lockguard', is 'name: renamed'" in finding["message"]


def test_lg102_without_the_copy_compares_with_the_other_views(project, lg, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path / "another-machine"))
    edit(project / "requirements.lock", "numpy==2.0.0", "numpy==1.26.4")
    (finding,) = [
        f
        for f in json.loads(check(lg, project, "--format", "json").stdout)["data"]["findings"]
        if f["code"] == "LG102"
    ]
    assert "entries that differ from the other lock files: numpy==1.26.4" in finding["message"]


# -- what `pip install lockguard` brings -----------------------------------------------------------


def test_runtime_dependencies_are_the_ones_lockguard_imports():
    import ast

    try:
        import tomllib

    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from packaging.requirements import Requirement

    declared = {
        Requirement(r).name.lower()
        for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    modules = {
        "click": "click",
        "rich": "rich",
        "packaging": "packaging",
        "resolvelib": "resolvelib",
        "tomlkit": "tomlkit",
        "tomli": "tomli",
        "httpx": "httpx",
        "py-rattler": "rattler",
        "nvidia-ml-py": "pynvml",
        "pyelftools": "elftools",
        "filelock": "filelock",
        "platformdirs": "platformdirs",
        "pyyaml": "yaml",
        "build": "build",
        "msgspec": "msgspec",
        "pyproject-hooks": "pyproject_hooks",
        "uv": "uv",  # the install engine: uv.find_uv_bin()
    }
    imported = set()
    for path in (REPO / "lockguard").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    assert "conda-lock" not in declared  # 74 packages / 238 MB that lockguard never imports
    unknown = declared - set(modules)
    assert not unknown, f"add the import name of {unknown} to this test"
    unused = {name for name in declared if modules[name] not in imported}
    assert not unused, f"declared but never imported: {unused}"
