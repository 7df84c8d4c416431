"""`lockguard check`: every finding code, triggered and not, each output format, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockguard.check import render
from lockguard.model.finding import Finding
from tests.support.conda_channel import build_channel
from tests.support.locked import check_json as check
from tests.support.locked import copy_project, edit, make_locked_project
from tests.support.world import running_world


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    root = tmp_path_factory.mktemp("check")
    with running_world(root) as world:
        channel = build_channel(root / "conda")
        solved = make_locked_project(root / "solved", world, channel)
        knowledge_only = make_locked_project(root / "ko", world, channel, knowledge_only=True)
        yield {"solved": solved, "knowledge-only": knowledge_only}


@pytest.fixture
def project(templates, tmp_path) -> Path:
    return copy_project(templates["solved"], tmp_path / "project")


def test_a_fresh_lock_is_clean(project, lg):
    code, codes, _ = check(lg, project)
    assert (code, codes) == (0, [])
    assert check(lg, project, "--strict")[1] == []  # solved, hashed: nothing for --strict either


def test_lg100_missing_lock_file(project, lg):
    (project / "requirements.lock").unlink()
    code, codes, findings = check(lg, project)
    assert code == 1 and "LG100" in codes
    assert findings[codes.index("LG100")]["file"] == "requirements.lock"


def test_lg101_intent_changed(project, lg):
    edit(project / "lockguard.toml", '"jinja2"]', '"jinja2", "hjson"]')
    code, codes, findings = check(lg, project)
    assert code == 1 and codes.count("LG101") == 3  # every lock file is stale
    assert {f["file"] for f in findings} == {
        "requirements.lock",
        "environment.yml",
        "conda-lock.yml",
    }


def test_lg102_hand_edit_names_the_entries(project, lg):
    edit(project / "requirements.lock", "numpy==1.26.4", "numpy==2.0.0")
    code, codes, findings = check(lg, project)
    assert code == 1 and "LG102" in codes
    edited = findings[codes.index("LG102")]
    assert "numpy==2.0.0" in edited["message"] and edited["line"] > 1
    assert "LG110" in codes  # and the views now disagree
    assert "LG125" in codes  # and NumPy 2 breaks torch 2.1 (knowledge hazard)


def test_lg104_not_a_lockguard_file(project, lg):
    (project / "requirements.lock").write_text("numpy==1.26.4\n")
    assert "LG104" in check(lg, project)[1]


def test_lg110_views_disagree_even_when_resealed(project, lg):
    edit(project / "environment.yml", "    - jinja2==1.0", "    - jinja2==0.9", reseal=True)
    code, codes, findings = check(lg, project)
    assert codes == [
        "LG110"
    ]  # against requirements.lock; conda-lock.yml still agrees with requirements.lock
    assert findings[0]["file"] == "environment.yml" and "jinja2" in findings[0]["message"]


def test_lg110_in_conda_lock_yml_names_the_line_of_the_package(project, lg):
    """A reviewer jumps to `- name: jinja2` in a file of hundreds of lines (the annotation too)."""
    edit(project / "requirements.lock", "jinja2==1.0", "jinja2==0.9", reseal=True)
    _code, codes, findings = check(lg, project)
    in_conda_lock = [f for f in findings if f["code"] == "LG110" and f["file"] == "conda-lock.yml"]
    assert len(in_conda_lock) == 1, findings
    lines = (project / "conda-lock.yml").read_text().splitlines()
    assert lines[in_conda_lock[0]["line"] - 1] == "- name: jinja2"


def test_lg111_conda_records_disagree(project, lg):
    edit(
        project / "environment.yml",
        "  - cuda-cudart-dev=12.1.105=h0",
        "  - cuda-cudart-dev=12.1.105=h1",
        reseal=True,
    )
    code, codes, _ = check(lg, project)
    assert codes == ["LG111"]


def test_lg120_conda_cuda_against_torch_cuda(project, lg):
    edit(
        project / "environment.yml",
        "  - cuda-version=12.1=h0",
        "  - cuda-version=11.8=h0",
        reseal=True,
    )
    codes = check(lg, project)[1]
    assert "LG120" in codes


def test_lg121_cuda_majors_side_by_side(project, lg):
    edit(
        project / "requirements.lock",
        "numpy==1.26.4",
        "nvidia-cublas-cu11==11.10.3.66\nnumpy==1.26.4",
        reseal=True,
    )
    assert "LG121" in check(lg, project)[1]


def test_lg122_gcc_newer_than_nvcc_accepts(project, lg):
    edit(
        project / "environment.yml",
        "  - gcc_linux-64=12.3.0=h0",
        "  - gcc_linux-64=13.2.0=h0",
        reseal=True,
    )
    code, codes, findings = check(lg, project)
    assert "LG122" in codes
    assert "gcc <= 12" in findings[codes.index("LG122")]["message"]


def test_lg123_driver_floor_below_the_locked_cuda(project, lg):
    edit(project / "lockguard.toml", 'driver = "535.104.05"', 'driver = "520.61.05"')
    codes = check(lg, project)[1]
    assert "LG123" in codes


def test_lg124_gpu_missing_from_the_torch_build(project, lg):
    edit(project / "lockguard.toml", 'gpu = ["sm_80", "sm_90"]', 'gpu = ["sm_80", "sm_100"]')
    code, codes, findings = check(lg, project)
    assert "LG124" in codes and "no kernel image" in findings[codes.index("LG124")]["message"]


def test_lg125_knowledge_hazard(project, lg):
    edit(project / "requirements.lock", "numpy==1.26.4", "numpy==2.0.0", reseal=True)
    code, codes, findings = check(lg, project)
    assert "LG125" in codes and "torch-numpy1-abi" in findings[codes.index("LG125")]["message"]


def test_lg126_deepspeed_nvcc_against_torch_cuda(project, lg):
    edit(
        project / "requirements.lock",
        "numpy==1.26.4",
        "deepspeed==0.13.1\nnumpy==1.26.4",
        reseal=True,
    )
    assert "LG126" not in check(lg, project)[1]  # nvcc 12.1 and torch cu121 agree
    edit(
        project / "environment.yml",
        "  - cuda-nvcc=12.1.105=h0",
        "  - cuda-nvcc=13.0.88=h0",
        reseal=True,
    )
    assert "LG126" in check(lg, project)[1]


def test_lg127_exact_torch_pin_of_xformers(project, lg):
    edit(
        project / "requirements.lock",
        "numpy==1.26.4",
        "numpy==1.26.4\nxformers==0.0.22.post7",
        reseal=True,
    )
    code, codes, findings = check(lg, project)
    assert "LG127" in codes and "torch==2.1.0" in findings[codes.index("LG127")]["message"]


def test_lg128_flash_attn_needs_ampere(project, lg):
    edit(
        project / "requirements.lock",
        "numpy==1.26.4",
        "flash-attn==2.5.6\nnumpy==1.26.4",
        reseal=True,
    )
    assert "LG128" not in check(lg, project)[1]
    edit(project / "lockguard.toml", 'gpu = ["sm_80", "sm_90"]', 'gpu = ["sm_75", "sm_80"]')
    assert "LG128" in check(lg, project)[1]


def test_lg130_requirements_file_pins(project, lg):
    (project / "requirements-dev.txt").write_text("jinja2>=0.5\n# numpy==2.0.0 in a comment\n")
    assert check(lg, project)[1] == []
    (project / "requirements-dev.txt").write_text("jinja2>=0.5\nnumpy==2.0.0  # newer\n")
    code, codes, findings = check(lg, project)
    assert (
        codes == ["LG130"]
        and findings[0]["line"] == 2
        and findings[0]["file"] == "requirements-dev.txt"
    )


def test_lg131_lg132_dockerfile(project, lg):
    (project / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\nRUN pip install jinja2==1.0\n"
    )
    assert check(lg, project)[1] == []
    (project / "Dockerfile").write_text(
        "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n"
        "RUN pip install --no-cache-dir \\\n    torch==2.0.1 jinja2==1.0\n"
    )
    code, codes, findings = check(lg, project)
    assert codes == ["LG131", "LG132"]
    assert (
        findings[0]["line"] == 1 and findings[1]["line"] == 2 and "torch" in findings[1]["message"]
    )
    (project / "Dockerfile").write_text("FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime\n")
    assert check(lg, project)[1] == ["LG131", "LG131"]  # its CUDA and its torch


def test_lg133_pyproject_and_setup_cfg(project, lg):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1"\ndependencies = [\n  "numpy>=1.20",\n]\n'
    )
    assert check(lg, project)[1] == []
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1"\ndependencies = [\n  "numpy>=2",\n]\n'
    )
    code, codes, findings = check(lg, project)
    assert codes == ["LG133"] and findings[0]["line"] == 5
    (project / "pyproject.toml").unlink()
    (project / "setup.cfg").write_text("[options]\ninstall_requires =\n    jinja2>=3\n")
    assert check(lg, project)[1] == ["LG133"]


def test_lg140_lg141_strict(templates, tmp_path, lg):
    project = copy_project(templates["knowledge-only"], tmp_path / "ko")
    assert check(lg, project)[1] == []
    assert check(lg, project, "--strict")[1] == ["LG140"]
    lock = project / "requirements.lock"
    text = lock.read_text()
    start = text.index("jinja2==1.0 \\")
    end = text.index("    # via", start)
    edit(lock, text[start:end], "jinja2==1.0\n", reseal=True)
    assert check(lg, project, "--strict")[1] == ["LG140", "LG141"]


def test_exact_text_github_and_json_formats():
    findings = [
        Finding(
            "LG130",
            "error",
            "requirements-dev.txt asks for numpy==2.0.0, the lock has numpy==1.26.4",
            "make the file agree with the lock",
            "requirements-dev.txt",
            2,
        ),
        Finding("LG140", "warning", "conda side not solved", None, "environment.yml", 5),
    ]
    ordered = sorted(findings, key=lambda f: f.sort_key)
    assert render.text(ordered, checked="lockguard.toml") == (
        "environment.yml\n"
        "  5: LG140 warning: conda side not solved\n"
        "requirements-dev.txt\n"
        "  2: LG130 error: requirements-dev.txt asks for numpy==2.0.0, the lock has numpy==1.26.4\n"
        "      hint: make the file agree with the lock\n"
        "2 findings (1 error, 1 warning): lockguard.toml\n"
    )
    assert render.github(ordered, cwd="/repo/services/train", root="/repo") == (
        "::warning file=services/train/environment.yml,line=5,title=LG140::conda side not solved\n"
        "::error file=services/train/requirements-dev.txt,line=2,title=LG130::"
        "requirements-dev.txt asks for numpy==2.0.0, "
        "the lock has numpy==1.26.4 (hint: make the file agree with the lock)\n"
    )
    # a system path attaches to nothing in the repository: no file= (nor line=)
    system = Finding("LG217", "warning", "foreign libnccl", None, "/usr/lib/libnccl.so.2", 3)
    assert render.github([system], cwd="/repo/services/train", root="/repo") == (
        "::warning title=LG217::foreign libnccl\n"
    )
    assert render.json_data(ordered, checked="x")["counts"] == {"error": 1, "warning": 1, "info": 0}
    assert render.text([], checked="lockguard.toml") == "ok: lockguard.toml: no findings\n"


def test_cli_formats_and_exit_codes(project, lg, monkeypatch):
    monkeypatch.chdir(project)
    clean = lg("check")
    assert (clean.exit_code, clean.stdout) == (0, "ok: lockguard.toml: no findings\n")
    (project / "requirements-dev.txt").write_text("numpy==2.0.0\n")
    text = lg("check")
    assert text.exit_code == 1 and text.stdout.startswith("requirements-dev.txt\n  1: LG130 error:")
    github = lg("check", "--format", "github")
    assert github.exit_code == 1 and github.stdout.startswith(
        "::error file=requirements-dev.txt,line=1,title=LG130::"
    )
    body = json.loads(lg("check", "--format", "json").stdout)
    assert body["schema"] == 1 and body["ok"] is False and body["exit_code"] == 1
    (project / "lockguard.toml").write_text('python = "3.11"\ncdua = "12.1"\n')
    bad = lg("check")
    assert bad.exit_code == 2 and "lockguard.toml:2" in bad.stderr and "Traceback" not in bad.stderr


def test_cached_result_is_reused_and_invalidated(project, lg, monkeypatch):
    monkeypatch.chdir(project)
    assert lg("check").exit_code == 0
    from lockguard.check import static

    calls = []
    original = static.static_findings
    monkeypatch.setattr(
        static, "static_findings", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    assert lg("check").exit_code == 0 and calls == []  # answered from the cache
    (project / "requirements-dev.txt").write_text("numpy==2.0.0\n")  # a new file: a miss
    assert lg("check").exit_code == 1 and calls == [1]
    edit(project / "requirements-dev.txt", "2.0.0", "1.26.4")  # changed bytes: a miss
    assert lg("check").exit_code == 0 and calls == [1, 1]
    assert lg("check").exit_code == 0 and calls == [1, 1]


def test_the_same_command_line_elsewhere_is_another_check(templates, tmp_path, lg, monkeypatch):
    """The memo is keyed by the command line and where it runs: two identical projects, one with a
    requirements file that contradicts its lock, each get their own answer to `lockguard check`."""
    clean = copy_project(templates["solved"], tmp_path / "a")
    drifted = copy_project(templates["solved"], tmp_path / "b")
    (drifted / "requirements-dev.txt").write_text("numpy==2.0.0\n")
    for _ in range(2):  # the second round is answered from the memo
        monkeypatch.chdir(clean)
        assert lg("check").exit_code == 0
        monkeypatch.chdir(drifted)
        result = lg("check")
        assert result.exit_code == 1 and "requirements-dev.txt" in result.stdout


def test_an_intent_link_pointed_elsewhere_is_checked_again(templates, tmp_path, lg, monkeypatch):
    """A symlinked intent: the project is the link's folder (its lock files are judged, never the
    ones next to the target), and a link moved to another intent is never the old answer."""
    project = copy_project(templates["solved"], tmp_path / "p")
    shared, other = tmp_path / "shared", copy_project(templates["solved"], tmp_path / "other")
    shared.mkdir()
    (project / "lockguard.toml").rename(shared / "lockguard.toml")
    edit(other / "lockguard.toml", '"numpy", ', "")  # another team's intent, with its own lock
    assert lg("resolve", "--intent", str(other / "lockguard.toml")).exit_code == 0
    monkeypatch.chdir(project)
    link = project / "lockguard.toml"
    link.symlink_to(shared / "lockguard.toml")
    assert lg("check", "--intent", "lockguard.toml").exit_code == 0
    assert lg("check", "--intent", "lockguard.toml").exit_code == 0  # from the memo
    link.unlink()
    link.symlink_to(other / "lockguard.toml")  # its lock files are current next to it, not here
    result = lg("check", "--intent", "lockguard.toml")
    assert result.exit_code == 1 and "LG101" in result.stdout, result.output


def test_an_empty_intent_option_is_bad_input_on_both_paths(project, lg, monkeypatch):
    """`--intent ''` names the folder "." (as click reads it), never "no --intent": exit 2, cached
    or not."""
    monkeypatch.chdir(project)
    for args in (
        ("check", "--intent", ""),
        ("check", "--intent="),
        ("check", "--intent=", "--no-cache"),
        ("-v", "check", "--intent", ""),
    ):  # the last one: the click command
        result = lg(*args)
        assert (
            result.exit_code == 2
            and "is a folder" in result.stderr
            and "Traceback" not in result.stderr
        ), args


@pytest.mark.parametrize(
    "platform, torch, cuda, variant, why",
    [
        ("linux-64", "2.1.2+cu118", "11.8", "cu118", "torch 2.1.2+cu118 is a cu118 build"),
        ("linux-64", "2.1.2+cpu", None, "cpu", "torch 2.1.2+cpu is a CPU build"),
        (
            "linux-64",
            "2.1.2",
            "12.1",
            "cu121",
            "PyPI's torch 2.1.2 is a cu121 build (constraints/torch.toml:",
        ),
        (
            "linux-aarch64",
            "2.1.2",
            None,
            "cpu",
            "PyPI's torch 2.1.2 for linux-aarch64 is a CPU build",
        ),
        (
            "linux-64",
            "1.0.0",
            None,
            None,
            "PyPI's torch 1.0.0 for linux-64 is a CPU build",
        ),  # no knowledge row
        ("linux-64", None, None, None, ""),
    ],
)
def test_the_torch_facts_of_a_lock(platform, torch, cuda, variant, why):
    """What the coherence rules know of a lock's torch: from its local label, else from the
    knowledge."""
    from lockguard.check.lock_facts import facts_of
    from lockguard.io.knowledge.files import load_knowledge

    pip = {"torch": torch} if torch else {}
    facts = facts_of(platform, pip, {"cuda-version": "12.1"}, load_knowledge())
    assert (
        facts.torch,
        str(facts.torch_cuda) if facts.torch_cuda else None,
        facts.torch_variant,
    ) == (torch, cuda, variant)
    assert (
        facts.torch_cuda_why.startswith(why) and facts.pip == pip and facts.conda_cuda() is not None
    )
