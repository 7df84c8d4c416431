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


@pytest.mark.parametrize("cuda", ["12.1", "11.8"])
def test_a_clash_elsewhere_is_exit_3_also_when_torch_needs_the_unreached_index(
    tmp_path, hf, lg, cuda
):
    """Issue 31 §3: with cuda = "11.8" every torch build is on the PyTorch index only (as on the
    real indexes: PyPI's torch wheels are cu121 and later), so torch has no candidate at all
    while the index is down; tokenizers>=0.20 against transformers 4.36.2 fails whether or not
    it answers: exit 3 naming tokenizers, not exit 4 blaming the index."""
    project = tmp_path / "p"
    intent = hf.intent(
        project, cuda=cuda, pip=["torch", "transformers==4.36.2", "tokenizers>=0.20"]
    )
    with_pytorch_index(intent, dead_url())
    result = resolve(lg, project)
    assert result.exit_code == 3, result.stderr
    assert "transformers 4.36.2 needs tokenizers<0.19,>=0.14" in result.stderr
    assert "cannot be reached" not in result.stderr.split("hint:")[0]


def test_torch_alone_still_blames_the_unreached_index(tmp_path, hf, lg):
    project = tmp_path / "p"
    with_pytorch_index(hf.intent(project, cuda="11.8", pip=["torch", "tokenizers"]), dead_url())
    result = resolve(lg, project)
    assert result.exit_code == 4, result.stderr
    assert "published only on the PyTorch index" in result.stderr
