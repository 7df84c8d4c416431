"""Issue 23, item 5: the paths that made some resolves 50x slower than uv, against a local index.

- a candidate's dependencies reach the resolver fastest-deciding first: a torch pin the CUDA stack
  has no build for rejects it before an sdist next to it is built;
- the resolver's own metadata request never waits behind queued speculative fetches, and a guess
  never builds an sdist;
- sdists with static metadata (PKG-INFO whose Requires-Dist is not Dynamic, or pyproject.toml's
  static [project] table) are read, not built; a Dynamic Requires-Dist is still built;
- a build that failed is remembered (sdist sha256 + build environment) until --refresh, and an
  entry that does not validate is a miss.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from lockguard.lockfiles import requirements_lock
from tests.support.wheels import build_sdist, build_wheel
from tests.support.world import IN_TREE_PYPROJECT, NEEDS_TORCH_BACKEND

PROJECT_TABLE = (
    IN_TREE_PYPROJECT
    + """
[project]
name = "{name}"
dynamic = ["version"]
requires-python = ">=3.9"
dependencies = ["hjson"]
[project.optional-dependencies]
extra = ["ninja; python_version >= '3.8'"]
"""
)


def intent(folder: Path, index, pip: list[str], cuda: str = "12.1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lockguard.toml").write_text(
        f'python = "3.11"\ncuda = "{cuda}"\nchannels = []\n'
        f'indexes = ["{index.url}"]\npip = {json.dumps(pip)}\n'
    )
    return folder / "lockguard.toml"


def pins(folder: Path) -> dict[str, str]:
    lock = requirements_lock.parse((folder / "requirements.lock").read_text())
    return {n: e.version for n, e in lock.entries.items()}


def sdist_gets(index, name: str) -> int:
    return sum(1 for method, path, _r in index.requests if method == "GET" and path.endswith(name))


@pytest.fixture
def index(local_index, tmp_path):
    w = tmp_path / "w"
    add = local_index.add
    add(build_wheel(w, "hjson", "3.1.0"))
    add(build_wheel(w, "ninja", "1.11.1"))
    # sgl 2.0 needs an sdist that cannot be built and a torch with no build for CUDA 12.1
    add(build_wheel(w, "sgl", "2.0", requires=["slowsdist==1.0", "torch==2.8.0"]))
    add(build_wheel(w, "sgl", "1.0", requires=["hjson"]))
    for version in ("3.0", "3.1", "3.2"):  # wheels for glibc 2.34 only
        add(
            build_wheel(
                w, "sgl", version, tag="cp311-cp311-manylinux_2_34_x86_64", requires=["hjson"]
            )
        )
    add(
        build_sdist(
            w,
            "slowsdist",
            "1.0",
            metadata_version="2.1",
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    # static metadata: PKG-INFO 2.4 with only Requires-Python Dynamic; a static [project] table
    add(
        build_sdist(
            w,
            "pkginfo-static",
            "1.0",
            requires=["hjson"],
            metadata_version="2.4",
            dynamic=("requires-python",),
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    # grouped_gemm's shape: PKG-INFO 2.4 marking only Provides-Extra Dynamic
    add(
        build_sdist(
            w,
            "extras-dynamic",
            "1.0",
            requires=["hjson", "ninja; extra == 'fast'"],
            metadata_version="2.4",
            dynamic=("provides-extra",),
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    add(
        build_sdist(
            w,
            "project-static",
            "1.0",
            metadata_version="2.1",
            pyproject=PROJECT_TABLE.format(name="project-static"),
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    add(
        build_sdist(
            w,
            "dynamic-deps",
            "1.0",
            requires=["hjson"],
            metadata_version="2.4",
            dynamic=("requires-dist",),
            pyproject=IN_TREE_PYPROJECT,
            files={"backend.py": NEEDS_TORCH_BACKEND},
        )
    )
    return local_index


def test_a_torch_pin_without_a_build_rejects_before_an_sdist_is_built(tmp_path, index, lg):
    project = tmp_path / "p"
    result = lg("resolve", "--intent", str(intent(project, index, ["sgl"])))
    assert result.exit_code == 0, result.stderr
    assert pins(project)["sgl"] == "1.0"
    # neither the resolver nor a guess built it
    assert sdist_gets(index, "slowsdist-1.0.tar.gz") == 0


def test_static_sdist_metadata_is_read_not_built(tmp_path, index, lg):
    project = tmp_path / "p"
    result = lg(
        "resolve",
        "--intent",
        str(intent(project, index, ["pkginfo-static", "project-static[extra]"])),
    )
    assert result.exit_code == 0, result.stderr  # both backends import torch: a build would fail
    found = pins(project)
    assert found["pkginfo-static"] == "1.0" and found["project-static"] == "1.0"
    # [project] dependencies and the extra's
    assert found["hjson"] == "3.1.0" and found["ninja"] == "1.11.1"
    # a Dynamic Provides-Extra next to a static Requires-Dist: the extras are in Requires-Dist
    extras = tmp_path / "extras"
    result = lg("resolve", "--intent", str(intent(extras, index, ["extras-dynamic[fast]"])))
    assert result.exit_code == 0, result.stderr
    assert {"extras-dynamic", "hjson", "ninja"} <= set(pins(extras))
    assert sdist_gets(index, "extras_dynamic-1.0.tar.gz") <= 1  # read once, never built
    dynamic = tmp_path / "dynamic"
    result = lg("resolve", "--intent", str(intent(dynamic, index, ["dynamic-deps"])))
    # Dynamic: requires-dist is never trusted: built, and the build fails
    assert result.exit_code == 2
    assert "dynamic_deps-1.0.tar.gz" in result.stderr and "its build failed" in result.stderr


def test_a_failed_build_is_remembered_until_refresh(tmp_path, index, lg):
    project = tmp_path / "p"
    path = intent(project, index, ["dynamic-deps"])
    first = lg("resolve", "--intent", str(path))
    assert first.exit_code == 2 and "its build failed" in first.stderr
    assert sdist_gets(index, "dynamic_deps-1.0.tar.gz") == 1
    index.reset_counters()
    second = lg("resolve", "--intent", str(path))
    assert second.exit_code == 2
    assert "its build failed" in second.stderr and "remembered from an earlier run" in second.stderr
    assert sdist_gets(index, "dynamic_deps-1.0.tar.gz") == 0  # not even downloaded again
    again = lg("resolve", "--intent", str(path), "--refresh")
    assert again.exit_code == 2 and "remembered" not in again.stderr
    assert sdist_gets(index, "dynamic_deps-1.0.tar.gz") == 1


def test_a_damaged_failed_build_entry_is_a_miss(tmp_path, index, lg):
    from tests.support import cache_entries

    path = intent(tmp_path / "p", index, ["dynamic-deps"])
    assert lg("resolve", "--intent", str(path)).exit_code == 2
    entries = cache_entries.entries("failed-build")
    assert len(entries) == 1
    entry = json.loads(cache_entries.payload(entries[0]))
    # a valid entry of the cache layer holding another sdist's failure under this name
    cache_entries.rewrite(entries[0], json.dumps({**entry, "sdist": "0" * 64}).encode())
    index.reset_counters()
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 2 and "remembered" not in result.stderr
    assert sdist_gets(index, "dynamic_deps-1.0.tar.gz") == 1  # built again


def test_the_resolvers_metadata_never_waits_behind_queued_guesses():
    from lockguard.io.index.pip_source import IndexPackageSource
    from lockguard.model.dist import DistFile, DistMetadata

    gate = threading.Event()

    class Fetcher:
        def fetch(self, name, version, file):
            if name == "busy":
                gate.wait(60)
            return DistMetadata(name, version, (), None)

    source = IndexPackageSource(index=None, fetcher=Fetcher(), workers=1)
    try:
        source.prefetch_metadata(
            "busy", "1.0", DistFile("busy-1.0-py3-none-any.whl", "http://x/busy.whl")
        )
        wanted = DistFile("wanted-1.0-py3-none-any.whl", "http://x/wanted.whl")
        source.prefetch_metadata("wanted", "1.0", wanted)  # queued behind the busy one
        answer = {}
        asker = threading.Thread(
            target=lambda: answer.setdefault("m", source.metadata("wanted", "1.0", wanted))
        )
        asker.start()
        # a deadlock guard, not a timing: the only worker is held until the gate opens
        asker.join(30)
        assert not asker.is_alive(), "the resolver waited for the queue"
        assert answer["m"].name == "wanted"
    finally:
        gate.set()
        source.close()


def test_the_newer_versions_of_a_direct_requirement_are_named_with_their_reason(
    tmp_path, index, lg
):
    project = tmp_path / "p"
    path = intent(project, index, ["sgl"])
    result = lg("resolve", "--intent", str(path))
    assert result.exit_code == 0, result.stderr
    assert pins(project)["sgl"] == "1.0"
    line = next(x for x in result.stderr.splitlines() if "sgl 1.0, not newer" in x)
    assert "4 newer versions the intent allows passed over" in line
    assert (
        "3.2 (its wheels need glibc 2.34 (manylinux_2_34), the target's is 2.28); "
        "3.1 (the same); 3.0 (the same)"
    ) in line
    # the three newest, by default
    assert line.endswith("and 1 more (lockguard -v resolve names them all)")
    # a relock keeps sgl 1.0: nothing newer was passed over
    kept = lg("resolve", "--intent", str(path))
    assert kept.exit_code == 0 and "not newer" not in kept.stderr
    verbose = lg("-v", "resolve", "--intent", str(path), "--refresh", "--upgrade")
    lines = [x for x in verbose.stderr.splitlines() if "sgl 1.0, not newer" in x]
    assert len(lines) == 1, lines  # the summary once, every version in it (issue 31 §3)
    line = lines[0]
    assert "2.0 (it needs torch==2.8.0: torch 2.8 was published for" in line and "not cu121" in line
    assert "more" not in line  # -v: every one
    glibc = tmp_path / "glibc"
    (glibc / "lockguard.toml").parent.mkdir()
    (glibc / "lockguard.toml").write_text(path.read_text() + 'glibc = "2.34"\n')
    result = lg("resolve", "--intent", str(glibc / "lockguard.toml"))
    assert (
        result.exit_code == 0 and pins(glibc)["sgl"] == "3.2" and "not newer" not in result.stderr
    )


def test_an_unpinned_sdist_only_package_whose_builds_fail_is_exit_2_with_the_entry(
    tmp_path, index, lg
):
    """Issue 31 §2 (torch-scatter, auto-gptq): every version is an sdist whose build imports
    torch. Unpinned, that is exit 2 naming the package, the build error's last lines and the
    [[dependency-metadata]] entry that answers it, never exit 3 'relax one of these'."""
    w = tmp_path / "scatter"
    for version in ("2.1.1", "2.1.2"):
        index.add(
            build_sdist(
                w,
                "scatter-ops",
                version,
                requires=["torch"],
                metadata_version="2.4",
                dynamic=("requires-dist",),
                pyproject=IN_TREE_PYPROJECT,
                files={"backend.py": NEEDS_TORCH_BACKEND},
            )
        )
    result = lg("resolve", "--intent", str(intent(tmp_path / "p", index, ["scatter-ops"])))
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert "scatter_ops-2.1.2.tar.gz" in err and "its build failed" in err
    assert "No module named 'torch'" in err  # the build's own last lines
    assert "import torch" in err.split("the build said:")[1]  # more than the very last line
    assert '[[dependency-metadata]] name = "scatter-ops" version = "2.1.2" requires-dist = ' in err
    assert "relax one of these" not in err
