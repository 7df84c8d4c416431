"""`lockguard init --from FILE... / --from-env PREFIX`: existing files and working environments
become an intent whose every value names the file and line it came from; contradictions are
refused."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from lockguard.io.project.intent_file import load_intent
from tests.support.envs import ENV_PYTHON_VERSION, make_venv, pip_install
from tests.support.index_server import LocalIndex
from tests.support.wheels import build_wheel
from tests.support.world import build_world, pypi_metadata

# The field report: pinned by hand in requirements.txt, CUDA and Python in the Dockerfile.
FIELD_REQUIREMENTS = """\
# training image requirements, pinned by hand
torch==2.1.0
torchvision==0.16.0
deepspeed==0.13.1
numpy==1.24.3
transformers==4.36.2
accelerate==0.25.0
sentencepiece==0.1.99
protobuf==3.20.3
ninja==1.11.1
"""
FIELD_PINS = [line for line in FIELD_REQUIREMENTS.splitlines() if "==" in line]
FIELD_DOCKERFILE = """\
FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends \\
        python3.9 python3.9-dev python3-pip git \\
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt /tmp/requirements.txt
RUN python3.9 -m pip install --no-cache-dir -r /tmp/requirements.txt
COPY . /app
"""
CONTRADICTING_ENV = """\
name: train
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.9
  - cudatoolkit=11.8
  - sysroot_linux-64=2.17
  - pip
  - pip:
    - numpy==1.24.3
"""
CP39 = "cp39-cp39-manylinux1_x86_64"
DEEPSPEED_METADATA = (
    '\n[[dependency-metadata]]\nname = "deepspeed"\nversion = "0.13.1"\n'
    'requires-dist = ["hjson", "ninja", "numpy", "torch"]\n'
)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The shared package world, plus the Python 3.9 wheels the field report's pins need."""
    root = tmp_path_factory.mktemp("adopt")
    pypi = LocalIndex(root / "pypi").start()
    pytorch = LocalIndex(root / "pytorch", mount="/whl", variants=True).start()
    world = build_world(root, pypi, pytorch)
    wheels, add = root / "cp39", pypi.add
    add(
        build_wheel(
            wheels,
            "torch",
            "2.1.0",
            tag=CP39,
            metadata=pypi_metadata("torch-2.1.0-cp311-cp311-manylinux1_x86_64"),
        )
    )
    add(
        build_wheel(
            wheels,
            "triton",
            "2.1.0",
            tag="cp39-cp39-manylinux2014_x86_64.manylinux_2_17_x86_64",
            requires=["filelock"],
        )
    )
    add(
        build_wheel(
            wheels,
            "torchvision",
            "0.16.0",
            tag=CP39,
            requires=["numpy", "requests", "torch==2.1.0", "pillow>=5.3.0,!=8.3.*"],
        )
    )
    add(
        build_wheel(
            wheels, "numpy", "1.24.3", tag="cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64"
        )
    )
    add(build_wheel(wheels, "markupsafe", "2.1.5", tag=CP39))
    add(build_wheel(wheels, "sentencepiece", "0.1.99", tag=CP39))
    add(
        build_wheel(
            wheels,
            "transformers",
            "4.36.2",
            requires=["numpy>=1.17", "packaging>=20.0", "filelock"],
        )
    )
    add(
        build_wheel(
            wheels,
            "accelerate",
            "0.25.0",
            requires=["numpy>=1.17", "torch>=1.10.0", "packaging>=20.0"],
        )
    )
    add(build_wheel(wheels, "protobuf", "3.20.3", tag="py2.py3-none-any"))
    for name, version in (("requests", "2.31.0"), ("pillow", "10.0.0"), ("packaging", "23.2")):
        add(build_wheel(wheels, name, version))
    yield world
    pypi.stop()
    pytorch.stop()


@pytest.fixture
def field(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text(FIELD_REQUIREMENTS)
    (tmp_path / "Dockerfile").write_text(FIELD_DOCKERFILE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _comments(text: str) -> dict[str, str]:
    """value -> its trailing comment, for every line of the written intent that has both."""
    out = {}
    for line in text.splitlines():
        match = re.match(r'^\s*(?:[a-z-]+ = )?"([^"]+)",? # (.+)$', line)
        if match:
            out[match.group(1)] = match.group(2)
    return out


def _line_of(path: Path, number: int) -> str:
    return path.read_text().splitlines()[number - 1]


def test_field_report_requirements_and_dockerfile(field, lg):
    result = lg("init", "--from", "requirements.txt", "--from", "Dockerfile")
    assert result.exit_code == 0, result.stderr
    intent = load_intent(field / "lockguard.toml")
    assert (str(intent.python), str(intent.cuda), intent.channels) == ("3.9", "12.1", ())
    assert list(intent.pip) == FIELD_PINS
    comments = _comments((field / "lockguard.toml").read_text())
    assert comments["12.1"] == "Dockerfile:1 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04)"
    assert comments["3.9"].startswith("Dockerfile:4 (python3.9 in RUN)")
    # every value names the file and line it came from, and that line says it
    for pin in FIELD_PINS:
        file, number = comments[pin].split(":")
        assert _line_of(field / file, int(number)) == pin
    assert "read requirements.txt for /tmp/requirements.txt" in result.stderr
    # instructions that say nothing about the intent are not noise
    assert "COPY" not in result.stderr


def test_field_report_intent_resolves_against_the_local_index(field, world, lg):
    assert (
        lg(
            "init",
            "--from",
            "requirements.txt",
            "--from",
            "Dockerfile",
            "--index",
            world.pypi.url,
            "--pylock",
        ).exit_code
        == 0
    )
    intent_path = field / "lockguard.toml"
    text = intent_path.read_text()
    intent_path.write_text(
        text.replace("pip = [", f'pytorch-index = "{world.pytorch.url}"\npip = [', 1)
    )
    first = lg("resolve", "--intent", str(intent_path))
    # deepspeed's sdist imports torch to compute its metadata: the resolve says what to add
    assert first.exit_code != 0 and "[[dependency-metadata]]" in first.stderr
    intent_path.write_text(intent_path.read_text() + DEEPSPEED_METADATA)
    result = lg("resolve", "--intent", str(intent_path), "--json")
    assert result.exit_code == 0, result.stderr
    pins = json.loads(result.stdout)["data"]["platforms"]["linux-64"]["pip"]
    for pin in FIELD_PINS:
        name, version = pin.split("==")
        assert pins[name] == version
    assert json.loads(result.stdout)["data"]["platforms"]["linux-64"]["cuda"] == "12.1"
    assert "cp39" in (field / "pylock.toml").read_text()
    assert lg("check", "--intent", str(intent_path), "--no-cache").exit_code == 0


def test_contradicting_environment_yml_is_reported_and_the_user_chooses(field, lg):
    (field / "environment.yml").write_text(CONTRADICTING_ENV)
    refused = lg(
        "init", "--from", "requirements.txt", "--from", "Dockerfile", "--from", "environment.yml"
    )
    assert refused.exit_code == 2 and not (field / "lockguard.toml").exists()
    assert (
        "cuda: Dockerfile:1 says 12.1 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04); "
        "environment.yml:7 says 11.8 (cudatoolkit=11.8)"
    ) in refused.stderr
    assert "--cuda" in refused.stderr and "Traceback" not in refused.stderr
    chosen = lg(
        "init",
        "--from",
        "requirements.txt",
        "--from",
        "Dockerfile",
        "--from",
        "environment.yml",
        "--cuda",
        "12.1",
    )
    assert chosen.exit_code == 0, chosen.stderr
    intent = load_intent(field / "lockguard.toml")
    assert (str(intent.cuda), intent.glibc, intent.channels) == ("12.1", "2.17", ("conda-forge",))
    assert intent.conda == ()  # cudatoolkit, sysroot, python and pip became intent keys, not specs
    text = (field / "lockguard.toml").read_text()
    assert (
        'cuda = "12.1" # --cuda 12.1; also Dockerfile:1' in text
        and "chosen over environment.yml:7" in text
    )
    assert (
        "numpy==1.24.3" in _comments(text)
        and "environment.yml:11" in _comments(text)["numpy==1.24.3"]
    )


def test_unknown_lines_are_listed_and_nothing_usable_is_exit_2(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text(
        "--find-links https://download.pytorch.org/whl/torch_stable.html\n"
        "-e ./src\n"
        "torch ===\n"
        "git+https://github.com/org/repo.git@v1\n"
        "-c constraints.txt\n"
    )
    result = lg("init", "--from", "requirements.txt")
    assert result.exit_code == 2 and not (tmp_path / "lockguard.toml").exists()
    for number in range(1, 6):
        assert f"requirements.txt:{number}:" in result.stderr
    assert (
        "nothing usable in requirements.txt" in result.stderr and "Traceback" not in result.stderr
    )
    (tmp_path / "requirements.txt").write_text("numpy<2\ntorch ===\n")
    partial = lg("init", "--from", "requirements.txt", "--python", "3.11")
    assert partial.exit_code == 0 and "skipped requirements.txt:2: torch ===" in partial.stderr
    text = (tmp_path / "lockguard.toml").read_text()
    assert (
        "#   requirements.txt:2: torch ===" in text
    )  # the intent itself lists what was not carried over
    assert load_intent(tmp_path / "lockguard.toml").pip == ("numpy<2",)


def test_missing_and_unknown_files_are_bad_input(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    missing = lg("init", "--from", "requirements.txt")
    assert missing.exit_code == 2 and "requirements.txt does not exist" in missing.stderr
    (tmp_path / "notes.md").write_text("torch\n")
    unknown = lg("init", "--from", "notes.md")
    assert unknown.exit_code == 2 and "cannot tell what kind of file" in unknown.stderr


def test_torch_without_any_cuda_fact_asks_for_cuda(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    result = lg("init", "--from", "requirements.txt", "--python", "3.11")
    assert result.exit_code == 2 and "no file says which CUDA build" in result.stderr, result.stderr
    assert "contradict" not in result.stderr  # nothing contradicts: a choice is missing (issue 25)
    assert (
        "requirements.txt:1 asks for torch==2.1.0" in result.stderr
        and "--cuda X.Y" in result.stderr
    )
    assert (
        lg("init", "--from", "requirements.txt", "--python", "3.11", "--cuda", "none").exit_code
        == 0
    )


def test_index_options_and_variant_labels(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.in").write_text(
        "--index-url https://mirror.example/simple\n"
        "--extra-index-url https://download.pytorch.org/whl/cu118\n"
        "--extra-index-url https://extra.example/simple/\n"
        "torch==2.1.2+cu118  # the cu118 build\n"
        "-r more.txt\n"
    )
    (tmp_path / "more.txt").write_text("jinja2>=3 \\\n    --hash=sha256:" + "a" * 64 + "\n")
    result = lg("init", "--from", "requirements.in", "--python", "3.11")
    assert result.exit_code == 0, result.stderr
    intent = load_intent(tmp_path / "lockguard.toml")
    assert str(intent.cuda) == "11.8" and intent.pip == ("torch==2.1.2", "jinja2>=3")
    assert intent.indexes == ("https://mirror.example/simple", "https://extra.example/simple")
    assert intent.pytorch_index == "https://download.pytorch.org/whl"  # the default: not written
    comments = _comments((tmp_path / "lockguard.toml").read_text())
    assert comments["jinja2>=3"] == "more.txt:1" and comments["torch==2.1.2"] == "requirements.in:4"
    assert "+cu118 label became cuda" in result.stderr


def test_pyproject_dependencies_and_requires_python(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1"\nrequires-python = ">=3.10"\n'
        'dependencies = [\n  "numpy<2",\n  "jinja2",\n]\n'
        '[project.optional-dependencies]\ndev = ["pytest"]\n'
    )
    result = lg("init", "--from", "pyproject.toml", "--pyproject")
    assert result.exit_code == 0, result.stderr
    intent = load_intent(tmp_path / "pyproject.toml")
    assert (str(intent.python), intent.pip) == ("3.10", ("numpy<2", "jinja2"))
    assert (
        "the oldest that pyproject.toml:4" in result.stderr
        and "[dev] are not carried over" in result.stderr
    )
    comments = _comments((tmp_path / "pyproject.toml").read_text())
    assert comments["numpy<2"] == "pyproject.toml:6"
    (tmp_path / "Dockerfile").write_text("FROM python:3.9-slim\n")
    outside = lg("init", "--from", "pyproject.toml", "--from", "Dockerfile", "--force")
    assert outside.exit_code == 2 and "outside requires-python" in outside.stderr


def test_dockerfile_args_pytorch_images_and_conda_installs(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Dockerfile").write_text(
        "ARG CUDA=11.8.0\n"
        "FROM nvidia/cuda:${CUDA}-runtime-ubuntu22.04 AS base\n"
        "# a comment\n"
        "RUN conda install -y -c conda-forge python=3.10 cuda-nvcc && \\\n"
        "    pip install -U 'numpy<2' 'jinja2>=3' --extra-index-url https://download.pytorch.org/whl/cu118\n"
    )
    result = lg("init", "--from", "Dockerfile")
    assert result.exit_code == 0, result.stderr
    intent = load_intent(tmp_path / "lockguard.toml")
    assert (str(intent.python), str(intent.cuda)) == ("3.10", "11.8")
    assert intent.channels == ("conda-forge",) and intent.conda == ("cuda-nvcc",)
    assert intent.pip == ("numpy<2", "jinja2>=3")
    (tmp_path / "Dockerfile").write_text("FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime\n")
    again = lg("init", "--from", "Dockerfile", "--python", "3.10", "--force")
    assert again.exit_code == 0
    intent = load_intent(tmp_path / "lockguard.toml")
    assert (str(intent.cuda), intent.pip) == ("12.1", ("torch==2.1.0",))


def test_from_env_mapping_of_a_conda_prefix_with_torch():
    from lockguard.adopt.environment import environment_facts
    from lockguard.adopt.mapping import adopt

    markers = {
        "sys_platform": "linux",
        "platform_machine": "x86_64",
        "python_version": "3.10",
        "python_full_version": "3.10.13",
        "os_name": "posix",
        "platform_system": "Linux",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }
    dists = [
        {
            "name": "torch",
            "version": "2.1.2+cu121",
            "requires": ["filelock", "jinja2"],
            "torch_cuda": "12.1",
        },
        {"name": "filelock", "version": "3.13.1", "requires": []},
        {
            "name": "Jinja2",
            "version": "3.1.3",
            "requires": ["MarkupSafe>=2.0", "Babel>=2.7; extra == 'i18n'"],
        },
        {"name": "MarkupSafe", "version": "2.1.5", "requires": []},
        {"name": "pip", "version": "24.0", "requires": []},
        {
            "name": "mylib",
            "version": "0.1",
            "requires": [],
            "direct_url": {"url": "file:///src/mylib-0.1-py3-none-any.whl", "archive_info": {}},
        },
        {"name": "numpy", "version": "1.26.4", "requires": [], "installer": "conda"},
    ]
    conda = [
        {
            "name": "python",
            "version": "3.10.13",
            "channel": "https://conda.anaconda.org/conda-forge/linux-64",
            "depends": ["openssl >=3"],
        },
        {
            "name": "openssl",
            "version": "3.2.1",
            "channel": "https://conda.anaconda.org/conda-forge/linux-64",
            "depends": [],
        },
        {
            "name": "numpy",
            "version": "1.26.4",
            "channel": "https://conda.anaconda.org/conda-forge/linux-64",
            "depends": ["python >=3.10"],
        },
        {
            "name": "cuda-nvcc",
            "version": "12.1.105",
            "channel": "https://conda.anaconda.org/nvidia/linux-64",
            "depends": [],
        },
    ]
    facts = environment_facts(
        {"version": "3.10.13", "markers": markers, "dists": dists}, conda, "/opt/env"
    )
    assert "mylib==0.1" in [s.text for s in facts.skipped]
    assert any("file:///src/mylib-0.1-py3-none-any.whl" in s.reason for s in facts.skipped)
    adopted = adopt(facts)
    assert adopted.ok, adopted.contradictions
    values = adopted.values
    assert (values["python"], values["cuda"]) == ("3.10", "12.1")
    assert values["pip"] == [
        "torch==2.1.2",
        "filelock==3.13.1",
        "jinja2==3.1.3",
        "markupsafe==2.1.5",
    ]
    assert values["channels"] == ["conda-forge", "nvidia"] and values["conda"] == [
        "cuda-nvcc=12.1.105",
        "numpy=1.26.4",
    ]
    assert adopted.notes["cuda"].startswith("/opt/env (torch 2.1.2+cu121 is a CUDA 12.1 build")
    top = adopt(
        environment_facts(
            {"version": "3.10.13", "markers": markers, "dists": dists},
            [],
            "/opt/env",
            top_level_only=True,
        )
    )
    assert top.values["pip"] == [
        "numpy==1.26.4",
        "torch==2.1.2",
    ]  # no conda-meta: numpy is a pip dist here


def test_from_env_round_trips_through_resolve_and_clean_install(world, tmp_path, monkeypatch, lg):
    source = make_venv(tmp_path / "source")
    pip_install(source, world.pypi.url, "jinja2==1.0", "numpy==1.26.4", "hjson==3.1.0")
    # installed from a file: no index has it
    local = build_wheel(tmp_path / "local", "inhouse", "0.1")
    pip_install(source, world.pypi.url, str(local))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    result = lg("init", "--from-env", str(source), "--index", world.pypi.url)
    assert result.exit_code == 0, result.stderr
    assert (
        "skipped" in result.stderr
        and "inhouse==0.1" in result.stderr
        and "no index serves it" in result.stderr
    )
    intent = load_intent(project / "lockguard.toml")
    assert (str(intent.python), str(intent.cuda), intent.channels) == (
        ENV_PYTHON_VERSION,
        "none",
        (),
    )
    assert set(intent.pip) == {"hjson==3.1.0", "jinja2==1.0", "numpy==1.26.4", "markupsafe==2.1.5"}
    assert lg("resolve", "--intent", str(project / "lockguard.toml")).exit_code == 0
    target = make_venv(tmp_path / "fresh")
    installed = lg(
        "clean-install",
        "--intent",
        str(project / "lockguard.toml"),
        "--prefix",
        str(target),
        "--yes",
    )
    assert installed.exit_code == 0, installed.stderr
    assert _dists(target) == {k: v for k, v in _dists(source).items() if k != "inhouse"}


def _dists(venv: Path) -> dict[str, str]:
    script = (
        "import json; from importlib import metadata; "
        "print(json.dumps({d.metadata['Name'].lower(): d.version "
        "for d in metadata.distributions() "
        "if d.metadata['Name'].lower() not in ('pip', 'setuptools', 'wheel')}))"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", script],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_from_env_with_a_python_that_prints_garbage_is_exit_2(tmp_path, monkeypatch, lg):
    monkeypatch.chdir(tmp_path)
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho 'Segmentation fault'\n")
    python.chmod(0o755)
    result = lg("init", "--from-env", str(python))
    assert result.exit_code == 2, result.output
    assert "printed something that is not the list of its distributions" in result.stderr
    assert "Traceback" not in result.output and not (tmp_path / "lockguard.toml").exists()
