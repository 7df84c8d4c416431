"""`lockguard check` in two tiers (issue 34 §3): lock files that certify themselves.

resolve writes each file's proof (the knowledge fingerprint, and the lock set's digest when check's
rules find nothing in it); check reads, hashes and compares, and runs its full rules only where a
proof fails, where a repository file the rules read exists, or with --strict. The findings are
the full rules' in every case: these tests watch which tier ran by making the rules fail when
they must not run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lockguard.lockfiles.headers import (
    PLACEHOLDER,
    certify,
    is_sealed_intact,
    lock_set_digest,
    read_header,
    seal,
    without_proof,
)
from tests.support.conda_channel import build_channel
from tests.support.locked import check_json, copy_project, edit, make_locked_project
from tests.support.world import running_world

LOCKS = ("requirements.lock", "environment.yml", "conda-lock.yml")


@pytest.fixture(scope="module")
def world_and_template(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiers")
    with running_world(root) as world:
        channel = build_channel(root / "conda")
        yield make_locked_project(root / "solved", world, channel)


@pytest.fixture
def project(world_and_template, tmp_path) -> Path:
    return copy_project(world_and_template, tmp_path / "project")


@pytest.fixture
def rules_ran(monkeypatch) -> list[str]:
    """Records each run of the full rules (which still run)."""
    import lockguard.check.static as static

    ran: list[str] = []
    real = static.static_findings

    def recorded(*args, **kwargs):
        ran.append("static")
        return real(*args, **kwargs)

    monkeypatch.setattr(static, "static_findings", recorded)
    return ran


def check(lg, project: Path, *args: str) -> tuple[int, list[str]]:
    code, codes, _findings = check_json(lg, project, *args)
    return code, codes


def strip_proof(path: Path) -> None:
    """The file as a lockguard before issue 34 wrote it: no proof lines, sealed."""
    text = without_proof(path.read_text())
    path.write_text(seal(text))


def test_resolve_writes_each_files_proof(project):
    texts = {name: (project / name).read_text() for name in LOCKS}
    digests = set()
    for name, text in texts.items():
        header = read_header(text)
        assert header.knowledge and re.fullmatch(r"[0-9a-f]{64}", header.knowledge), name
        assert header.lock_set is not None, name
        assert is_sealed_intact(text), name
        digests.add(header.lock_set)
    assert digests == {lock_set_digest(texts)}  # one set, the digest of all its files


def test_a_proven_lock_set_is_checked_without_the_rules(project, lg, rules_ran):
    assert check(lg, project) == (0, [])
    assert rules_ran == []


def test_strict_runs_the_full_rules(project, lg, rules_ran):
    assert check(lg, project, "--strict") == (0, [])
    assert rules_ran == ["static"]


def test_a_repository_file_the_rules_read_runs_them(project, lg, rules_ran):
    (project / "requirements.txt").write_text("numpy==2.0.0\n")
    check(lg, project)
    assert rules_ran == ["static"]


def test_a_resealed_edit_breaks_the_set_and_the_rules_find_it(project, lg, rules_ran):
    """A file edited and sealed again passes its own body hash; the set's digest does not."""
    edit(project / "requirements.lock", "jinja2==1.0", "jinja2==0.9", reseal=True)
    code, codes = check(lg, project)
    assert rules_ran == ["static"]
    assert code == 1 and "LG110" in codes


def test_a_file_of_another_resolve_breaks_the_set(project, lg, rules_ran, tmp_path):
    """Each file intact, same intent, but one from a set written apart: the rules run."""
    other = project / "environment.yml"
    text = re.sub(
        r"(lockguard-lock-set: sha256:)[0-9a-f]{64}", r"\g<1>" + "1" * 64, other.read_text()
    )
    other.write_text(
        seal(re.sub(r"(body-hash: sha256:)[0-9a-f]{64}", r"\g<1>" + PLACEHOLDER, text))
    )
    assert is_sealed_intact(other.read_text())
    assert check(lg, project) == (0, [])
    assert rules_ran == ["static"]


def test_other_knowledge_runs_the_rules(project, lg, rules_ran, tmp_path, monkeypatch):
    from lockguard.io.cache.fingerprints import constraints_folder

    folder = tmp_path / "constraints"
    shutil.copytree(constraints_folder(), folder)
    with (folder / "hazards.toml").open("a") as out:
        out.write("\n# a comment: other bytes, other knowledge\n")
    monkeypatch.setenv("LOCKGUARD_CONSTRAINTS", str(folder))
    assert check(lg, project) == (0, [])
    assert rules_ran == ["static"]


def test_files_from_before_the_proof_take_the_full_rules_and_stay_current(project, lg, rules_ran):
    """A lock set written before lockguard recorded the proof: check is clean (its full rules),
    and `resolve --check` does not call it stale (the proof's absence alone would turn every
    project's CI red on upgrade); a resolve writes the proof."""
    for name in LOCKS:
        strip_proof(project / name)
        assert "lockguard-knowledge" not in (project / name).read_text()
    assert check(lg, project) == (0, [])
    assert rules_ran == ["static"]
    intent = str(project / "lockguard.toml")
    result = lg("resolve", "--intent", intent, "--check")
    assert result.exit_code == 0, result.output
    assert lg("resolve", "--intent", intent).exit_code == 0
    assert all("lockguard-lock-set" in (project / name).read_text() for name in LOCKS)
    rules_ran.clear()
    assert check(lg, project) == (0, [])
    assert rules_ran == []


def test_resolve_check_still_finds_a_stale_file_without_the_proof(project, lg):
    """The proof lines are left out of the comparison, nothing else is."""
    edit(project / "requirements.lock", "jinja2==1.0", "jinja2==0.9", reseal=True)
    strip_proof(project / "requirements.lock")
    result = lg("resolve", "--intent", str(project / "lockguard.toml"), "--check")
    assert result.exit_code == 1


def test_certify_is_only_a_set_digest_when_clean():
    a = seal(
        f"# lockguard-pins: sha256:{PLACEHOLDER}\n# lockguard-body-hash: sha256:{PLACEHOLDER}\na\n"
    )
    stamped = certify({"a.lock": a}, "f" * 64, clean=False)["a.lock"]
    assert read_header(stamped).knowledge == "f" * 64 and read_header(stamped).lock_set is None
    assert is_sealed_intact(stamped)
    assert without_proof(stamped) == without_proof(a)


@pytest.fixture
def click_ran(monkeypatch) -> list[list[str]]:
    """Records each command that went on to click (cli/commands.py's invoke)."""
    import lockguard.cli.commands as commands

    ran: list[list[str]] = []
    real = commands.invoke

    def recorded(argv, ui):
        ran.append(list(argv))
        return real(argv, ui)

    monkeypatch.setattr(commands, "invoke", recorded)
    return ran


@pytest.mark.parametrize(
    "args",
    [
        ("--no-cache", "--intent", "{intent}"),
        ("--intent={intent}", "--no-cache"),
        ("--intent", "{intent}"),
    ],
)
def test_a_plain_check_of_a_proven_set_is_answered_before_click(
    project, lg, rules_ran, click_ran, args
):
    intent = str(project / "lockguard.toml")
    result = lg("check", *(a.format(intent=intent) for a in args))
    assert (result.exit_code, click_ran, rules_ran) == (0, [], [])
    assert result.stdout.startswith("ok: ") and result.stdout.endswith(": no findings\n")


def test_a_plain_check_whose_proof_fails_goes_on_to_click(project, lg, rules_ran, click_ran):
    edit(project / "requirements.lock", "jinja2==1.0", "jinja2==0.9")
    result = lg("check", "--no-cache", "--intent", str(project / "lockguard.toml"))
    assert result.exit_code == 1 and "LG102" in result.stdout
    assert len(click_ran) == 1 and rules_ran == ["static"]


def test_other_command_lines_go_on_to_click():
    from lockguard.cli.boundary import plain_check

    assert plain_check(["check"]) == (None, False)
    assert plain_check(["check", "--no-cache", "--intent", "x.toml"]) == ("x.toml", True)
    for argv in (
        ["check", "--strict"],
        ["check", "--format", "json"],
        ["check", "--intent"],
        ["check", "--intent", "--no-cache"],
        ["check", "--no-cache", "--no-cache"],
        ["-v", "check"],
        ["resolve"],
        [],
    ):
        assert plain_check(argv) is None, argv


def test_a_set_the_rules_warn_about_is_not_certified(project, lg, rules_ran, monkeypatch):
    """resolve writes the set's digest only when check's rules find nothing in it: a warning
    they give must come from the rules each time."""
    import lockguard.app.resolution as resolution
    from lockguard.model import codes

    warning = codes.CONDA_FROM_KNOWLEDGE.finding("a warning", None, "environment.yml")
    monkeypatch.setattr(resolution, "check_findings", lambda *args: [warning])
    intent = str(project / "lockguard.toml")
    for name in LOCKS:
        strip_proof(project / name)
    assert lg("resolve", "--intent", intent, "--refresh").exit_code == 0
    for name in LOCKS:
        header = read_header((project / name).read_text())
        assert header.knowledge is not None and header.lock_set is None, name
    check(lg, project)
    assert rules_ran == ["static"]
