"""A project's own paths are never a way out (issue 30, item 4 and the rule for all of them).

The project is the folder the intent was found in: a symlinked lockguard.toml is read through the
link, but resolve writes the lock files next to the link and check judges those, never the files
next to the link's target (another project's). Every file resolve and check open in the project as
their own (the four lock views) is replaced in turn by a symlink out of the project (to a file, and
dangling), a FIFO and a folder: exit 2 naming the path (and a link's target), no hang, no exit 70,
no traceback, and not one byte changed in the project or outside it. Real child lockguard
processes against a real index on 127.0.0.1, the conda side pinned from lockguard's knowledge."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.support.releases import Releases, pins, write_intent

KNOWLEDGE = 'conda-from-knowledge = true\n[outputs]\npylock = "pylock.toml"\n'
VIEWS = ("requirements.lock", "environment.yml", "pylock.toml", "conda-lock.yml")


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2"])
    found.publish("lib", "1.0")
    return found


def tree(root: Path) -> dict[str, str]:
    """What every entry under `root` is, without opening anything but regular files (a FIFO is
    named, never read): equal trees are byte-identical."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            full = os.path.join(folder, name)
            info = os.lstat(full)
            relative = os.path.relpath(full, root)
            if stat.S_ISLNK(info.st_mode):
                out[relative] = "-> " + os.readlink(full)
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    out[relative] = hashlib.sha256(handle.read()).hexdigest()
            else:
                out[relative] = f"mode {stat.S_IFMT(info.st_mode):o}"
    return out


def sane(result, *named: str) -> None:
    """Exit 2, each of `named` in the message, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output, result.output
    for text in named:
        assert text in result.stderr, (text, result.stderr)


# -- a symlinked intent -------------------------------------------------------------------------


def test_a_symlinked_intent_keeps_the_project_in_the_links_folder(tmp_path, releases, lg_process):
    """`p/lockguard.toml -> ../outside/lockguard.toml`: resolve in p/ writes p/'s lock files (never
    outside/'s, another project's) and check in p/ judges p/'s."""
    outside = tmp_path / "outside"
    write_intent(outside, releases.index.url, ["app"], channels=["conda-forge"], extra=KNOWLEDGE)
    theirs = lg_process("resolve", cwd=outside)
    assert theirs.exit_code == 0, theirs.output
    (outside / "requirements.lock").write_text(
        (outside / "requirements.lock").read_text() + "# their own lock, edited by hand\n"
    )
    before = tree(outside)
    project = tmp_path / "p"
    project.mkdir()
    (project / "lockguard.toml").symlink_to(Path("..") / "outside" / "lockguard.toml")

    resolved = lg_process("resolve", "--json", cwd=project)
    assert resolved.exit_code == 0, resolved.output
    written = json.loads(resolved.stdout)["data"]["written"]
    assert sorted(Path(p).name for p in written) == sorted(VIEWS)
    assert all(Path(p).parent == project for p in written), written
    assert tree(outside) == before
    assert pins(project) == {"app": "1.0", "lib": "1.0"}
    assert (project / "lockguard.toml").is_symlink()  # read through the link, never replaced

    checked = lg_process("check", cwd=project)
    assert checked.exit_code == 0, checked.output
    # check judges p/'s files: one gone in p/ is missing there, while outside/ still has its own
    (project / "environment.yml").unlink()
    missing = lg_process("check", "--format", "json", cwd=project)
    assert missing.exit_code == 1, missing.output
    found = json.loads(missing.stdout)["data"]["findings"]
    assert [f["code"] for f in found] == ["LG100"], found
    assert tree(outside) == before

    # the same through --intent from elsewhere, and again (a memoized resolve writes where the
    # first one did)
    again = lg_process("resolve", "--intent", str(project / "lockguard.toml"), cwd=tmp_path)
    assert again.exit_code == 0, again.output
    assert (project / "environment.yml").is_file()
    assert tree(outside) == before


# -- every path resolve and check open in the project ------------------------------------------


@pytest.fixture
def template(tmp_path, releases, lg_process) -> tuple[Path, list[str]]:
    """A resolved project, and the files (relative) its resolve wrote, as it reports them."""
    project = tmp_path / "template"
    write_intent(project, releases.index.url, ["app"], channels=["conda-forge"], extra=KNOWLEDGE)
    result = lg_process("resolve", "--json", cwd=project)
    assert result.exit_code == 0, result.output
    written = [os.path.relpath(p, project) for p in json.loads(result.stdout)["data"]["written"]]
    assert sorted(written) == sorted(VIEWS)
    assert lg_process("check", cwd=project).exit_code == 0
    return project, written


def _symlink_out(path: Path, outside: Path) -> str:
    victim = outside / f"victim-{path.name}"
    victim.write_text("precious: another project's file\n")
    path.symlink_to(victim)
    return str(victim)


def _same_bytes_out(path: Path, outside: Path) -> str:
    """A link to a copy of the very file, outside: resolve would find it "unchanged" and check
    would pass, if either followed it."""
    victim = outside / f"copy-{path.name}"
    shutil.copyfile(path, victim)
    path.unlink()
    path.symlink_to(victim)
    return str(victim)


def _dangling_out(path: Path, outside: Path) -> str:
    target = outside / f"absent-{path.name}"
    path.symlink_to(target)
    return str(target)


def _fifo(path: Path, _outside: Path) -> str:
    os.mkfifo(path)
    return "FIFO"


def _folder(path: Path, _outside: Path) -> str:
    path.mkdir()
    (path / "inside.txt").write_text("a file in the folder\n")
    return "folder"


REPLACEMENTS = {
    "symlink-out": _symlink_out,
    "same-bytes-symlink-out": _same_bytes_out,
    "dangling-symlink-out": _dangling_out,
    "fifo": _fifo,
    "folder": _folder,
}


def test_every_project_path_replaced_by_a_symlink_out_a_fifo_or_a_folder_is_refused(
    tmp_path, template, lg_process
):
    source, written = template
    failures = []
    cases = [(relative, kind) for relative in written for kind in REPLACEMENTS]
    # the intent itself may be a symlink (the test above); a FIFO or a folder is refused
    cases += [("lockguard.toml", "fifo"), ("lockguard.toml", "folder")]
    for number, (relative, kind) in enumerate(cases):
        case = tmp_path / f"case-{number}"
        project, outside = case / "p", case / "outside"
        shutil.copytree(source, project)
        outside.mkdir()
        target = project / relative
        if kind != "same-bytes-symlink-out":
            target.unlink()
        what = REPLACEMENTS[kind](target, outside)
        before = tree(case)
        commands = [("resolve",), ("resolve", "--check"), ("check",)]
        if relative in ("requirements.lock", "environment.yml", "lockguard.toml"):
            commands.append(("explain", "lib"))  # reads these two views of the lock
        for command in commands:
            result = lg_process(*command, cwd=project)
            try:
                sane(result, relative, *([what] if kind.endswith("out") else []))
                if kind.endswith("out"):
                    assert "outside the project folder" in result.stderr, result.stderr
                else:
                    assert what in result.stderr or "not a regular file" in result.stderr, (
                        result.stderr
                    )
                assert tree(case) == before, f"{command} changed a byte"
            except AssertionError as exc:
                failures.append(f"{relative} as {kind}, {' '.join(command)}: {exc}")
    assert not failures, "\n".join(failures)


def test_a_remembered_check_is_not_replayed_through_a_symlink_out(tmp_path, template, lg_process):
    """A plain check is answered from its memo while the files it read keep their bytes: a lock
    file swapped for a link to an outside copy of the same bytes is no longer that file."""
    source, _written = template
    project, outside = tmp_path / "p", tmp_path / "outside"
    shutil.copytree(source, project)
    outside.mkdir()
    assert lg_process("check", cwd=project).exit_code == 0  # remembered
    assert lg_process("check", cwd=project).exit_code == 0  # replayed
    victim = _same_bytes_out(project / "requirements.lock", outside)
    result = lg_process("check", cwd=project)
    sane(result, "requirements.lock", victim, "outside the project folder")
