"""Issue 23, item 4: an unreachable PyTorch index is exit 4 only when its builds are the only way
out; the exclude-newer cut-off applies to its builds (PEP 691 upload times where the index gives
them, else the torch release's date from the knowledge); a lock that does not depend on it gets no
"may differ" warning (and is memoized)."""

from __future__ import annotations

import pytest

from tests.support.wheels import build_wheel
from tests.test_resolve_realworld import dead_url, resolve, versions, with_pytorch_index


@pytest.fixture
def hf(world, tmp_path):
    w = tmp_path / "hf"
    for version in ("0.15.2", "0.20.0"):
        world.pypi.add(build_wheel(w, "tokenizers", version), upload_time="2023-11-01T00:00:00Z")
    world.pypi.add(
        build_wheel(w, "transformers", "4.36.2", requires=["tokenizers<0.19,>=0.14"]),
        upload_time="2023-12-18T00:00:00Z",
    )
    world.pypi.add(
        build_wheel(w, "transformers", "4.36.0", requires=["tokenizers<0.19,>=0.14"]),
        upload_time="2023-12-11T00:00:00Z",
    )
    world.pypi.add(
        build_wheel(w, "transformers", "4.35.2", requires=["tokenizers<0.19,>=0.14"]),
        upload_time="2023-11-16T00:00:00Z",
    )
    return world


def test_an_unrelated_conflict_while_the_index_is_down_is_exit_3_naming_it(tmp_path, hf, lg):
    project = tmp_path / "p"
    with_pytorch_index(
        hf.intent(project, pip=["torch", "transformers==4.36.2", "tokenizers>=0.20"]), dead_url()
    )
    result = resolve(lg, project)
    # the tokenizers clash, whatever the index would say
    assert result.exit_code == 3, result.stderr
    assert "tokenizers" in result.stderr and "tokenizers<0.19,>=0.14" in result.stderr
    assert "published only on the PyTorch index" not in result.stderr


def test_a_cut_off_older_than_the_index_build_is_exit_3_naming_the_cut_off(tmp_path, hf, lg):
    project = tmp_path / "cu118"
    with_pytorch_index(
        hf.intent(
            project,
            cuda="11.8",
            pip=["torch==2.1.*"],
            extra='exclude-newer = "2023-06-01T00:00:00Z"\n',
        ),
        dead_url(),
    )
    hf.pytorch.reset_counters()
    result = resolve(lg, project)
    # not "cannot be reached": no build could be taken anyway
    assert result.exit_code == 3, result.stderr
    assert (
        "torch 2.1 cu118 (PyTorch index builds) came out 2023-10-04 to 2023-12-14, "
        "after exclude-newer "
        "2023-06-01" in result.stderr
    )
    assert "cannot be reached" not in result.stderr
    # a package newer than the cut-off, with torch unpinned: its own date is the answer
    pinned = tmp_path / "pinned"
    with_pytorch_index(
        hf.intent(
            pinned,
            pip=["torch", "transformers==4.36.0"],
            extra='exclude-newer = "2023-12-01T00:00:00Z"\n',
        ),
        dead_url(),
    )
    result = resolve(lg, pinned)
    assert result.exit_code == 3, result.stderr
    assert (
        "transformers 4.36.0 was uploaded on 2023-12-11, after exclude-newer 2023-12-01"
        in result.stderr
    )
    assert "cannot be reached" not in result.stderr


def test_the_index_upload_times_apply_where_it_gives_them(tmp_path, hf, lg):
    late = tmp_path / "late"
    hf.pytorch.add(
        build_wheel(late, "torch", "2.1.1+cu118", tag="cp311-cp311-linux_x86_64"),
        variant="cu118",
        upload_time="2024-01-05T00:00:00Z",
    )
    project = tmp_path / "p"
    hf.intent(
        project, cuda="11.8", pip=["torch==2.1.1"], extra='exclude-newer = "2023-12-01T00:00:00Z"\n'
    )
    result = resolve(lg, project)
    # torch 2.1.1 came out 2023-11-15, this build on 2024-01-05
    assert result.exit_code == 3, result.stderr
    assert "torch has no release before exclude-newer 2023-12-01" in result.stderr


def test_a_lock_that_does_not_depend_on_the_unreached_index_does_not_warn(tmp_path, hf, lg):
    project = tmp_path / "p"
    with_pytorch_index(hf.intent(project, pip=["torch", "xformers==0.0.22.post7"]), dead_url())
    result = resolve(lg, project)
    assert result.exit_code == 0, result.stderr
    # xformers pins it: no index build could be the answer
    assert versions(project)["torch"] == "2.1.0"
    assert "may differ" not in result.stderr and "PyTorch index" not in result.stderr
    again = lg("-v", "resolve", "--intent", str(project / "lockguard.toml"))
    # memoized, as any resolve that did not warn
    assert again.exit_code == 0 and "resolution memo:" in again.stderr
