"""`lockguard init`: writes an intent with tomlkit, preserving an existing pyproject."""

from __future__ import annotations

from lockguard.io.project.intent_file import load_intent

PYPROJECT = """\
# project header comment
[project]
name = "demo"   # trailing comment
version = "0.1.0"
dependencies = [
    "requests",  # needed for the API
]

[tool.ruff]
line-length = 100
"""


def test_init_writes_lockguard_toml(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    result = lg("init", "--python", "3.11", "--cuda", "12.1", "torch==2.1.*", "deepspeed==0.13.1")
    assert result.exit_code == 0, result.stderr
    intent = load_intent(tmp_path / "lockguard.toml")
    assert str(intent.cuda) == "12.1" and intent.pip == ("torch==2.1.*", "deepspeed==0.13.1")


def test_init_refuses_to_overwrite_without_force(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    assert lg("init", "--python", "3.11").exit_code == 0
    before = (tmp_path / "lockguard.toml").read_text()
    result = lg("init", "--python", "3.10", "--cuda", "11.8")
    assert (
        result.exit_code == 2 and "already exists" in result.stderr and "--force" in result.stderr
    )
    assert (tmp_path / "lockguard.toml").read_text() == before
    assert lg("init", "--python", "3.10", "--cuda", "11.8", "--force").exit_code == 0
    assert str(load_intent(tmp_path / "lockguard.toml").python) == "3.10"


def test_init_pyproject_keeps_comments_and_layout(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    result = lg("init", "--pyproject", "--python", "3.11", "--cuda", "none", "numpy<2")
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith(PYPROJECT)  # everything that was there is there, byte for byte
    assert "[tool.lockguard]" in text
    intent = load_intent(tmp_path / "pyproject.toml")
    assert intent.pip == ("numpy<2",) and intent.source.in_pyproject
    again = lg("init", "--pyproject", "--python", "3.12")
    assert again.exit_code == 2 and "[tool.lockguard]" in again.stderr


def test_init_rejects_bad_values_and_writes_nothing(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    result = lg("init", "--python", "3.11", "--cuda", "12.x")
    assert result.exit_code == 2 and "not a CUDA version" in result.stderr
    result = lg("init", "--python", "3.11", "not a requirement!")
    assert result.exit_code == 2 and "not a valid requirement" in result.stderr
    assert not (tmp_path / "lockguard.toml").exists()
    assert lg("init", "--pyproject").exit_code == 2  # no pyproject.toml here


def test_init_names_the_environment_after_the_project_folder(lg, tmp_path, monkeypatch):
    """Two projects on one machine must not both `conda env create` an environment `lockguard`."""
    project = tmp_path / "my vision-model"
    project.mkdir()
    monkeypatch.chdir(project)
    assert lg("init", "--python", "3.11", "--cuda", "none", "torch").exit_code == 0
    assert 'name = "my-vision-model"' in (project / "lockguard.toml").read_text()


def test_init_says_what_resolve_needs_where_the_conda_channel_is_out_of_reach(
    lg, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = lg("init", "--python", "3.11", "--cuda", "none", "jinja2")
    assert result.exit_code == 0
    assert "it solves the conda side on conda-forge" in result.stderr
    assert "lockguard resolve --conda-from-knowledge" in result.stderr


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def test_init_pins_the_conda_side_from_knowledge_where_the_channel_cannot_be_reached(
    lg, tmp_path, monkeypatch
):
    import time

    monkeypatch.setenv("LOCKGUARD_CHANNEL_PROBE", "1")
    channel = f"http://127.0.0.1:{_closed_port()}/conda-forge"
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    result = lg("init", "--python", "3.11", "--cuda", "none", "--channel", channel, "jinja2")
    assert result.exit_code == 0, result.stderr
    assert time.monotonic() - started < 15  # a short, bounded probe
    text = (tmp_path / "lockguard.toml").read_text()
    assert "\nconda-from-knowledge = true\n" in text, text
    assert f"# the conda channel {channel} could not be reached (" in text, text
    assert load_intent(tmp_path / "lockguard.toml").conda_from_knowledge
    assert "the intent says conda-from-knowledge = true" in result.stderr, result.stderr
    # the same in pyproject.toml's [tool.lockguard]
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(project)
    result = lg("init", "--pyproject", "--python", "3.11", "--channel", channel, "jinja2")
    assert result.exit_code == 0, result.stderr
    assert load_intent(project / "pyproject.toml").conda_from_knowledge


def test_init_leaves_the_conda_side_to_the_solver_where_the_channel_answers(
    lg, world, tmp_path, monkeypatch
):
    # any HTTP answer is an answer (a 404 is the channel's, not the network's); the probe can
    # also be switched off
    monkeypatch.setenv("LOCKGUARD_CHANNEL_PROBE", "1")
    monkeypatch.chdir(tmp_path)
    result = lg("init", "--python", "3.11", "--channel", f"{world.pypi.url}/channel", "jinja2")
    assert result.exit_code == 0, result.stderr
    assert "conda-from-knowledge" not in (tmp_path / "lockguard.toml").read_text()
    monkeypatch.setenv("LOCKGUARD_CHANNEL_PROBE", "0")
    unreachable = f"http://127.0.0.1:{_closed_port()}/c"
    assert lg("init", "--force", "--python", "3.11", "--channel", unreachable).exit_code == 0
    assert "conda-from-knowledge" not in (tmp_path / "lockguard.toml").read_text()
