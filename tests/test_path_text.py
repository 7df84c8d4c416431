"""io/path_text.py answers what pathlib answers: the check path reads the project through it
(pathlib is off that path), and its error messages and paths must stay byte for byte the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lockguard.io.knowledge_files import _folder_text, default_dir
from lockguard.io.path_text import exists_or_link, name_of, plain, resolved
from lockguard.io.project.intent_file import _choose_in_cwd, choose_intent, load_project

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gpu-training"


@pytest.mark.parametrize("text", ["/a/b", "/a", "/", "//a/b", "/a//b", "/a/./b", "/a/b/", "/a/b/.", "a/b", "./a",
                                  "/a/../b", "/a/.b", "/a/b..", ""])
def test_plain_means_pathlib_spells_it_the_same(text):
    if plain(text):
        assert str(Path(text)) == text and Path(text).name == name_of(text)
        assert str(Path(text).parent) == os.path.dirname(text)
    assert plain(text) == (text in ("/a/b", "/a", "/a/../b", "/a/.b", "/a/b.."))


def test_resolved_and_exists_or_link_agree_with_pathlib(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to("file")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "file-parent").symlink_to("file")
    for name in ("file", "folder", "link", "dangling", "missing", "file/below", "file-parent/x"):
        text = str(tmp_path / name)
        assert resolved(text) == str(Path(text).resolve()), name
        assert exists_or_link(text) == (Path(text).exists() or Path(text).is_symlink()), name
    loop = str(tmp_path / "loop")
    assert exists_or_link(loop) == (Path(loop).exists() or Path(loop).is_symlink())
    with pytest.raises(RuntimeError):  # pathlib's "Symlink loop": handed to pathlib, raised the same
        resolved(loop)


def test_the_check_path_chooses_and_loads_what_pathlib_would(tmp_path, monkeypatch):
    for folder in (EXAMPLE, REPO):
        monkeypatch.chdir(folder)
        fast, slow = _choose_in_cwd(), choose_intent(Path.cwd())
        assert (str(fast.path), str(fast.ignored) if fast.ignored else None) == (
            str(slow.path), str(slow.ignored) if slow.ignored else None)
        intent = load_project(None, validate=False)
        assert intent.source.location == str(slow.path.resolve())
        assert intent.source.path == slow.path.resolve() and intent.source.root == slow.path.resolve().parent
        assert intent.source.name == slow.path.name and intent.source.folder == str(slow.path.resolve().parent)
        assert intent == load_project(str(slow.path), validate=False)
    assert _folder_text(None) == str(default_dir())

