"""`clean-install --from pylock.toml`: the PEP 751 view (or a pylock.toml uv wrote) applied with the
same transaction as requirements.lock, on real venvs filled by real pip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.envs import (
    PIP_ENV,
    pip_install,
    site_packages,
    tree_hashes,
)

PYLOCK = '[outputs]\npylock = "pylock.toml"\n'


def resolve(world, folder: Path, pip: list[str], extra: str = PYLOCK) -> Path:
    return world.locked(folder, cuda="12.1", pip=pip, extra=extra)


def installed(venv: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, **PIP_ENV},
        check=True,
    ).stdout
    return {
        p["name"].lower(): p["version"]
        for p in json.loads(out)
        if p["name"] not in ("pip", "setuptools")
    }


def test_the_projects_pylock_is_applied_as_one_transaction(world, venv, lg, tmp_path):
    project = resolve(world, tmp_path / "project", ["jinja2", "oldlib"])
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    before = tree_hashes(venv)
    intent = str(project / "lockguard.toml")
    dry = lg(
        "clean-install",
        "--intent",
        intent,
        "--from",
        str(project / "pylock.toml"),
        "--prefix",
        str(venv),
        "--dry-run",
        "--json",
    )
    plan = json.loads(dry.stdout)["data"]["plan"]
    assert plan["requirements"] == str(project / "pylock.toml")
    assert (
        sorted(o["name"] for o in plan["outgoing"]) == ["hjson", "oldlib"]
        and "oldlib==2.0" in plan["install"]
    )
    result = lg(
        "clean-install",
        "--intent",
        intent,
        "--from",
        str(project / "pylock.toml"),
        "--prefix",
        str(venv),
        "--yes",
    )
    assert result.exit_code == 0, result.stderr
    assert "the environment matches the lock" in result.stderr
    assert installed(venv) == {"jinja2": "1.0", "markupsafe": "2.1.5", "oldlib": "2.0"}
    check = lg("check", "--intent", intent, "--env", str(venv), "--format", "json")
    assert check.exit_code == 0, check.stdout
    assert lg("restore", "--prefix", str(venv)).exit_code == 0
    assert tree_hashes(venv) == before


def test_a_pylock_that_disagrees_with_the_project_lock_is_refused(world, venv, lg, tmp_path):
    project = resolve(world, tmp_path / "project", ["jinja2", "oldlib"], extra="")
    other = resolve(world, tmp_path / "other", ["jinja2", "oldlib==1.0"])
    before = tree_hashes(venv)
    result = lg(
        "clean-install",
        "--intent",
        str(project / "lockguard.toml"),
        "--from",
        str(other / "pylock.toml"),
        "--prefix",
        str(venv),
        "--yes",
    )
    assert result.exit_code == 2
    assert "oldlib 1.0 (the lock: 2.0)" in result.stderr and "Traceback" not in result.stderr
    assert tree_hashes(venv) == before


def test_outside_a_project_the_pylock_is_the_whole_lock(world, venv, lg, tmp_path, monkeypatch):
    source = resolve(world, tmp_path / "project", ["jinja2", "oldlib"])
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(source / "pylock.toml", alone / "pylock.toml")
    monkeypatch.chdir(alone)
    pip_install(venv, world.pypi.url, "oldlib==1.0", "hjson")
    result = lg("clean-install", "--from", "pylock.toml", "--prefix", str(venv), "--yes")
    assert result.exit_code == 0, result.stderr
    assert installed(venv) == {"jinja2": "1.0", "markupsafe": "2.1.5", "oldlib": "2.0"}
    assert not (site_packages(venv) / "hjson").exists()  # not in the pylock: quarantined
    assert "imported jinja2" in result.stderr  # the smoke imports what the pylock installs
    again = lg("clean-install", "--from", "pylock.toml", "--prefix", str(venv), "--yes")
    assert again.exit_code == 0 and "nothing to change" in again.stdout


def test_a_pylock_written_by_uv_is_applied(world, venv, lg, tmp_path, monkeypatch):
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv is a test dependency (pip install -e '.[test]')"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.in").write_text("jinja2\noldlib\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(
        UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never"
    )
    done = subprocess.run(
        [
            uv,
            "pip",
            "compile",
            "requirements.in",
            "-o",
            "pylock.toml",
            "--index-url",
            world.pypi.url,
            "--python-version",
            "3.11",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = lg("clean-install", "--from", "pylock.toml", "--prefix", str(venv), "--yes")
    assert result.exit_code == 0, result.stderr
    assert installed(venv) == {"jinja2": "1.0", "markupsafe": "2.1.5", "oldlib": "2.0"}


def test_a_package_without_hashed_files_is_refused_with_its_line(venv, lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pylock.toml").write_text(
        'lock-version = "1.0"\ncreated-by = "hand"\n\n'
        '[[packages]]\nname = "acme"\nversion = "1.0"\n'
        '[packages.vcs]\ntype = "git"\n'
        'url = "https://example.invalid/acme.git"\ncommit-id = "0123abcd"\n'
    )
    before = tree_hashes(venv)
    result = lg("clean-install", "--from", "pylock.toml", "--prefix", str(venv), "--yes")
    assert result.exit_code == 2
    assert "pylock.toml:4: acme 1.0 has no wheel or sdist with a sha256 hash" in result.stderr
    assert tree_hashes(venv) == before
    (tmp_path / "broken.toml").write_text('lock-version = "1.0"\n[[packages]]\nname = 3\n')
    result = lg("clean-install", "--from", "broken.toml", "--prefix", str(venv), "--yes")
    assert result.exit_code == 2 and "broken.toml:2" in result.stderr


def test_local_paths_and_urls_become_one_links_page():
    from lockguard.install.pylock_source import install_from_pylock, links_page
    from lockguard.lockfiles.pylock import read

    text = (
        'lock-version = "1.0"\ncreated-by = "hand"\n\n'
        '[[packages]]\nname = "Acme_Lib"\nversion = "1.0"\n'
        'wheels = [{ path = "wheels/acme_lib-1.0-py3-none-any.whl", hashes = { sha256 = "aa" } },\n'
        "          { url = "
        '"https://files.example/x/acme_lib-1.0-cp311-cp311-linux_x86_64.whl?a=1&b=2", '
        'hashes = { sha256 = "bb" } }]\n'
    )
    found = install_from_pylock(read(text), "pylock.toml", "/srv/lock")
    assert found.requirements.entries["acme-lib"].hashes == ("aa", "bb")
    assert found.requirements.index_url is None
    assert found.links == [
        "file:///srv/lock/wheels/acme_lib-1.0-py3-none-any.whl#sha256=aa",
        "https://files.example/x/acme_lib-1.0-cp311-cp311-linux_x86_64.whl?a=1&b=2#sha256=bb",
    ]
    page = links_page(found.links)
    assert (
        'href="https://files.example/x/acme_lib-1.0-cp311-cp311-linux_x86_64.whl?a=1&amp;b=2#sha256=bb"'
        in page
    )


def test_the_packages_indexes_become_the_index_options_in_their_order():
    from lockguard.install.pylock_source import install_from_pylock
    from lockguard.lockfiles.pylock import read

    package = (
        '[[packages]]\nname = "{name}"\nversion = "1.0"\nindex = "{index}"\n'
        'wheels = [{{ url = "https://files.example/{name}-1.0-py3-none-any.whl", '
        'hashes = {{ sha256 = "{h}" }} }}]\n'
    )
    text = 'lock-version = "1.0"\ncreated-by = "hand"\n\n' + "".join(
        package.format(name=name, index=index, h=h)
        for name, index, h in (
            ("a", "https://first.example/simple", "aa"),
            ("b", "https://second.example/simple", "bb"),
            ("c", "https://first.example/simple", "cc"),
        )
    )
    found = install_from_pylock(read(text), "pylock.toml", "/srv/lock")
    assert found.requirements.index_url == "https://first.example/simple"
    assert found.requirements.extra_index_urls == ("https://second.example/simple",)
    assert sorted(found.requirements.entries) == ["a", "b", "c"]
