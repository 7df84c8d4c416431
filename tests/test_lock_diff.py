"""The change report between two locks (issue 21): `lockguard diff OLD NEW` and
`lockguard diff --git REV` in text, JSON and Markdown, the CUDA stack first with the facts that
move with it (torch's CUDA, the driver floor, the GPU architectures, the cuDNN major)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.releases import Releases, write_intent

OLD = """\
--index-url https://pypi.org/simple

jinja2==3.1.4
numpy==1.26.4
six==1.16.0
torch==2.1.2+cu118
"""
NEW = """\
--index-url https://pypi.org/simple

jinja2==3.1.2
numpy==1.26.4
nvidia-cudnn-cu12==9.5.1.17
requests==2.31.0
torch==2.7.1
"""


@pytest.fixture
def locks(tmp_path) -> tuple[Path, Path]:
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old, new = tmp_path / "old" / "requirements.lock", tmp_path / "new" / "requirements.lock"
    old.write_text(OLD)
    new.write_text(NEW)
    return old, new


def test_text_lists_the_cuda_stack_first_and_the_facts_that_move(locks, lg):
    result = lg("diff", str(locks[0]), str(locks[1]))
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "linux-64: 2 added, 1 removed, 1 upgraded, 1 downgraded, 4 CUDA facts moved"
    assert lines[1:] == [
        "  CUDA stack:",
        "    added       nvidia-cudnn-cu12  9.5.1.17",
        "    upgraded    torch              2.1.2+cu118 -> 2.7.1",
        "  other:",
        "    downgraded  jinja2             3.1.4 -> 3.1.2",
        "    added       requests           2.31.0",
        "    removed     six                1.16.0",
        "  CUDA facts: CUDA 11.8 -> 12.6; driver floor 450.80.02 -> 525.60.13; "
        "cuDNN major none -> 9; "
        "GPU architectures -sm_37 -sm_61",
    ]


def test_json_is_the_report_as_data(locks, lg):
    result = lg("diff", str(locks[0]), str(locks[1]), "--format", "json")
    assert result.exit_code == 1
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "diff" and envelope["exit_code"] == 1
    platform = envelope["data"]["platforms"]["linux-64"]
    assert envelope["data"]["unchanged"] is False and platform["counts"] == {
        "added": 2,
        "removed": 1,
        "upgraded": 1,
        "downgraded": 1,
    }
    assert platform["cuda_stack"][1] == {
        "name": "torch",
        "side": "pip",
        "change": "upgraded",
        "old": "2.1.2+cu118",
        "new": "2.7.1",
    }
    assert {
        "fact": "driver floor",
        "old": "450.80.02",
        "new": "525.60.13",
        "gained": [],
        "lost": [],
    } in platform["facts"]
    archs = next(f for f in platform["facts"] if f["fact"] == "GPU architectures")
    assert archs["lost"] == ["sm_37", "sm_61"] and archs["gained"] == []


def test_markdown_is_a_table_for_a_pull_request(locks, lg):
    result = lg("diff", str(locks[0]), str(locks[1]), "--format", "markdown")
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith(f"### Lock changes: {locks[0]} -> {locks[1]}\n")
    assert "| CUDA stack | upgraded | `torch` | 2.1.2+cu118 | 2.7.1 |" in text
    assert "| other | removed | `six` | 1.16.0 |  |" in text
    assert "| driver floor | 450.80.02 | 525.60.13 |" in text
    assert text.index("`nvidia-cudnn-cu12`") < text.index("`jinja2`")  # CUDA stack first


def test_identical_locks_are_unchanged_and_exit_0(locks, lg):
    result = lg("diff", str(locks[0]), str(locks[0]))
    assert result.exit_code == 0 and result.stdout.strip() == "linux-64: unchanged"


def test_bad_input_is_exit_2_naming_the_file(locks, lg, tmp_path):
    missing = lg("diff", str(locks[0]), str(tmp_path / "nope.lock"))
    assert missing.exit_code == 2 and "nope.lock does not exist" in missing.stderr
    (tmp_path / "bad.lock").write_text("torch==2.1.2\nthis is no pin\n")
    bad = lg("diff", str(locks[0]), str(tmp_path / "bad.lock"))
    assert bad.exit_code == 2 and f"{tmp_path / 'bad.lock'}:2" in bad.stderr
    (tmp_path / "environment.yml").write_text("name: x\ndependencies:\n  - python=3.11\n")
    kinds = lg("diff", str(locks[0]), str(tmp_path / "environment.yml"))
    assert kinds.exit_code == 2 and "cannot be compared" in kinds.stderr
    assert " an environment file" in kinds.stderr and " a requirements file" in kinds.stderr
    (tmp_path / "cr.lock").write_bytes(locks[0].read_bytes().replace(b"\n", b"\r"))
    cr_only = lg("diff", str(locks[0]), str(tmp_path / "cr.lock"))
    assert cr_only.exit_code == 2 and "bare carriage return (CR)" in cr_only.stderr  # not "removed"
    one = lg("diff", str(locks[0]))
    assert one.exit_code == 2 and "--git HEAD" in one.stderr
    both = lg("diff", str(locks[0]), str(locks[1]), "--git", "HEAD")
    assert both.exit_code == 2
    for result in (missing, bad, kinds, one, both):
        assert "Traceback" not in result.output


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@e", *args],
        check=True,
        capture_output=True,
    )


def test_git_revision_against_the_working_tree(tmp_path, local_index, lg, monkeypatch):
    releases = Releases(local_index, tmp_path / "wheels")
    releases.publish("app", "1.0", requires=["lib"])
    releases.publish("lib", "1.0")
    releases.publish("six", "1.17.0")
    project = tmp_path / "repo"
    write_intent(project, local_index.url, ["app"])
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "lock")
    monkeypatch.chdir(project)
    assert lg("diff").exit_code == 0  # nothing changed since HEAD
    write_intent(project, local_index.url, ["app", "six"])
    assert lg("resolve").exit_code == 0
    for args in (
        ["diff"],
        ["diff", "--git", "HEAD"],
        ["diff", "--git", "HEAD", "requirements.lock"],
    ):
        result = lg(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stdout.splitlines() == ["linux-64: 1 added", "  added       six  1.17.0"], (
            args
        )
    markdown = lg("diff", "--git", "HEAD", "--format", "markdown")
    assert (
        markdown.stdout.startswith("### Lock changes since HEAD\n")
        and "| other | added | `six` |  | 1.17.0 |" in markdown.stdout
    )
    bad = lg("diff", "--git", "no-such-rev")
    assert bad.exit_code == 2 and "no-such-rev: not a commit" in bad.stderr
    elsewhere = tmp_path / "not-a-repo"
    write_intent(elsewhere, local_index.url, ["app"])
    outside = lg("diff", "--git", "HEAD", "--intent", str(elsewhere / "lockguard.toml"))
    assert outside.exit_code == 2 and "not inside a git repository" in outside.stderr
