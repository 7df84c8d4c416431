"""Every message true and useful (issue 25): crashes on bad input become exit 2 naming the file,
line or option; inputs that were wrongly accepted are refused; messages say what is known, where the
user runs, in the words (and the count) that are right. Each test fails without its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lockguard.model.versions import GpuArch
from tests.support.conda_channel import build_channel
from tests.support.locked import copy_project, edit, make_locked_project
from tests.support.world import running_world


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("messages")
    with running_world(root) as world:
        yield make_locked_project(root / "solved", world, build_channel(root / "conda"))


@pytest.fixture
def project(template, tmp_path) -> Path:
    return copy_project(template, tmp_path / "project")


def bad_input(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


# -- crashes that are bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--platform", "bogus"], "'bogus' is not one of 'linux-64'"),
        (["--python", "3.x"], "--python: '3.x' is not a Python version"),
    ],
)
def test_constraints_show_refuses_a_bad_option_by_name(lg, argv, fragment):
    bad_input(lg("constraints", "show", *argv, "torch", "2.1"), fragment)


def test_init_pyproject_that_is_not_utf8_or_whose_tool_is_not_a_table(lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_bytes(b'[project]\nname = "x"\n\xff\xfe\n')
    bad_input(
        lg("init", "--pyproject", "--python", "3.11", "--cuda", "none"),
        "pyproject.toml:3:",
        "not UTF-8",
        "save it as UTF-8",
    )
    (tmp_path / "pyproject.toml").write_text('tool = 5\n[project]\nname = "x"\n')
    bad_input(
        lg("init", "--pyproject", "--python", "3.11", "--cuda", "none"),
        "pyproject.toml:1: tool: must be a table",
    )
    assert (tmp_path / "pyproject.toml").read_text() == 'tool = 5\n[project]\nname = "x"\n'


@pytest.mark.parametrize(
    "key, literal, fragment",
    [
        ("exclude-newer", '"0001-01-01T00:00:00+01:00"', "is not between 2008-01-01 and now"),
        ("exclude-newer", '"9999-12-31T23:59:59-01:00"', "is not between 2008-01-01 and now"),
        ("indexes", '["http://[::1"]', "cannot be parsed (Invalid IPv6 URL)"),
        ("indexes", '["http://x:99999/simple"]', "has port 99999, outside 1-65535"),
        ("indexes", '["http://%zz/simple"]', "has a host name that is not valid"),
        ("indexes", '["http://a\\u0000b/simple"]', "has control characters"),
        ("pytorch-index", '"http://[::1"', "cannot be parsed"),
        ("python", '"\\u0663.\\u0661\\u0661"', "is not a Python version"),
        ("python", '"\\uff13.\\uff11\\uff11"', "is not a Python version"),
        ("cuda", '"\\uff11\\uff12.\\uff11"', "is not a CUDA version"),
        ("driver", '"\\uff15\\uff13\\uff15.104.05"', "is not an NVIDIA driver version"),
        ("gpu", '["sm_80a"]', "'a' targets start at sm_90a"),
        ("gpu", '["sm_90f"]', "'f' targets start at sm_100f"),
    ],
)
def test_intent_values_that_crashed_or_were_accepted_are_exit_2_with_the_line(
    project, lg, key, literal, fragment
):
    intent = project / "lockguard.toml"
    lines = [line for line in intent.read_text().splitlines() if not line.startswith(f"{key} =")]
    intent.write_text("\n".join([*lines, f"{key} = {literal}"]) + "\n")
    line = len(lines) + 1
    for command in (["check", "--no-cache"], ["resolve", "--offline"]):
        result = lg(*command, "--intent", str(intent))
        bad_input(result, f"lockguard.toml:{line}: {key}:", fragment)


@pytest.mark.parametrize(
    "entry, fragment",
    [
        ("requires-python = 5", "requires-python: must be a string"),
        ('requires-python = [">=3"]', "requires-python: must be a string"),
        ('name = "a b/../c"', "'a b/../c' is not a project name"),
        ('name = ""', "'' is not a project name"),
    ],
)
def test_dependency_metadata_is_validated_on_every_command(project, lg, entry, fragment):
    intent = project / "lockguard.toml"
    key = entry.split(" =")[0]
    fields = {"name": 'name = "x"', "version": 'version = "1"', key: entry}
    intent.write_text(
        intent.read_text() + "\n[[dependency-metadata]]\n" + "\n".join(fields.values()) + "\n"
    )
    for command in ("check", "explain"):
        argv = [command, "--intent", str(intent)] + (
            ["--no-cache"] if command == "check" else ["jinja2"]
        )
        bad_input(lg(*argv), "dependency-metadata.", fragment)


@pytest.mark.parametrize(
    "version, fragment",
    [
        ("2.1.2+cu1", "+cu1 is not a PyTorch build label"),
        ("2.1.2+cuda", "+cuda is not a PyTorch build label"),
        ("banana", "'banana' is not a PEP 440 version"),
        ("2." + "1" * 5000, "the version is 5,002 characters long"),
    ],
)
def test_a_lock_pin_lockguard_did_not_write_is_exit_2_naming_the_line(
    project, lg, version, fragment
):
    lock = project / "requirements.lock"
    pinned = re.search(r"^torch==(\S+)", lock.read_text(), re.M).group(1)
    edit(lock, f"torch=={pinned}", f"torch=={version}", reseal=True)
    line = next(
        n for n, text in enumerate(lock.read_text().splitlines(), 1) if text.startswith("torch==")
    )
    for argv in (["check", "--no-cache"], ["explain", "torch"]):
        bad_input(
            lg(*argv, "--intent", str(project / "lockguard.toml")),
            f"requirements.lock:{line}: torch:",
            fragment,
        )


# -- wrong success --------------------------------------------------------------------------------


def test_explain_for_a_platform_the_lock_does_not_have_is_exit_2(project, lg):
    result = lg(
        "explain",
        "--intent",
        str(project / "lockguard.toml"),
        "--platform",
        "linux-aarch64",
        "jinja2",
    )
    bad_input(result, "--platform: the lock has no linux-aarch64 section (it locks linux-64)")
    assert (
        lg(
            "explain",
            "--intent",
            str(project / "lockguard.toml"),
            "--platform",
            "linux-64",
            "jinja2",
        ).exit_code
        == 0
    )


def test_arch_and_family_specific_targets_exist_only_from_their_generation():
    assert str(GpuArch.parse("sm_90a")) == "sm_90a" and str(GpuArch.parse("sm_100f")) == "sm_100f"
    for text in ("sm_80a", "sm_86a", "sm_90f", "sm_\u0668\u0660"):
        with pytest.raises(ValueError):
            GpuArch.parse(text)


# -- unclear or untrue ----------------------------------------------------------------------------


def test_check_rejects_a_conda_matchspec_as_resolve_does(project, lg):
    intent = project / "lockguard.toml"
    intent.write_text(intent.read_text() + 'conda = ["cuda-nvcc >=>12"]\n')
    for argv in (["check"], ["check", "--no-cache"], ["resolve", "--offline"]):
        bad_input(
            lg(*argv, "--intent", str(intent)),
            "conda: 'cuda-nvcc >=>12' is not a valid conda MatchSpec",
        )


def test_toml_nested_too_deeply_names_its_line(lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    deep = "[" * 2000 + "]" * 2000
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.lockguard]\npython = "3.11"\ncuda = "none"\nx = {deep}\n'
    )
    bad_input(
        lg("check"),
        "pyproject.toml:4 is not valid TOML: arrays or tables nested more than 100 deep",
    )


def test_a_trailing_comma_in_an_inline_table_is_named_as_toml_1_1_on_every_python(
    lg, tmp_path, monkeypatch
):
    """TOML 1.1 allows it; tomllib (3.11-3.14) and tomli below 2.4 (3.10) do not: the same exit 2
    on every Python, and the message says why a valid-looking line is refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lockguard.toml").write_text(
        'python = "3.11"\ncuda = "none"\noutputs = { environment = "env.yml", }\n'
    )
    bad_input(
        lg("check"),
        "lockguard.toml:3 is not valid TOML",
        "a comma before an inline table's `}` is TOML 1.1",
        "remove the comma",
    )


def test_an_inline_table_where_a_string_belongs_is_named_with_its_line(lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        'tool.lockguard.python = "3.11"\ntool.lockguard.cuda = { v = "12.1" }\n'
    )
    bad_input(lg("check"), "pyproject.toml:2: cuda: must be a string, not a table", 'cuda = "..."')


def test_a_pyproject_toml_that_is_not_toml_is_named_not_reported_as_no_intent(
    lg, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        'tool.lockguard.python = "3.11"\ntool.lockguard.cuda = "none"\nbad = \n'
    )
    result = lg("check")
    bad_input(result, "pyproject.toml:3 is not valid TOML")
    assert "no intent found" not in result.stderr
    # no lockguard in it at all
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nbad = \n')
    bad_input(lg("check"), "no intent found", "pyproject.toml:3 cannot be read as TOML")


def test_init_without_a_cuda_source_asks_for_the_choice_and_names_no_contradiction(
    lg, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("torch==2.1.2\n")
    result = lg("init", "--from", "requirements.txt", "--python", "3.11")
    bad_input(
        result,
        "a choice the files do not make",
        "requirements.txt:1 asks for torch==2.1.2",
        "--cuda X.Y",
    )
    assert "contradict" not in result.stderr


def test_init_names_the_option_that_gave_a_bad_value_not_a_file_it_did_not_write(
    lg, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = lg("init", "--python", "3.11.7", "--cuda", "none")
    bad_input(
        result,
        "--python: '3.11.7' is a patch release",
        "nothing was written to lockguard.toml",
    )
    assert "lockguard.toml:" not in result.stderr and not (tmp_path / "lockguard.toml").exists()
    bad_input(lg("init", "--python", "3.11", "--cuda", "12"), "--cuda: '12' is not a CUDA version")


def test_init_from_environment_yml_keeps_its_name(lg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "environment.yml").write_text(
        "name: trainer\nchannels: [conda-forge]\ndependencies:\n"
        "  - python=3.11\n  - pip:\n    - requests\n"
    )
    assert lg("init", "--from", "environment.yml", "--cuda", "none").exit_code == 0
    assert (
        'name = "trainer" # environment.yml:1 (name: trainer)'
        in (tmp_path / "lockguard.toml").read_text()
    )


def test_check_from_a_folder_above_the_project_names_files_from_there(project, lg, monkeypatch):
    (project / "Dockerfile").write_text("FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n")
    monkeypatch.chdir(project.parent)
    result = lg("check", "--intent", "project/lockguard.toml", "--format", "github")
    assert result.exit_code == 1
    assert "::error file=project/Dockerfile,line=1,title=LG131::" in result.stdout, result.stdout
    text = lg("check", "--intent", "project/lockguard.toml")
    assert text.stdout.startswith("project/Dockerfile\n") and text.stdout.endswith(
        ": project/lockguard.toml\n"
    )
    monkeypatch.chdir(project)  # from the project itself: as before
    assert "::error file=Dockerfile,line=1" in lg("check", "--format", "github").stdout


def test_annotations_in_a_monorepo_are_placed_against_the_repository(
    project, lg, monkeypatch, tmp_path
):
    """`working-directory: services/train` in Actions: GitHub resolves `file=` against the
    repository (GITHUB_WORKSPACE), so a path relative to the project would attach to nothing."""
    repo = tmp_path / "repo"
    train = repo / "services" / "train"
    train.parent.mkdir(parents=True)
    project.rename(train)
    (repo / ".git").mkdir()  # the top level, as `git init` marks it
    (train / "Dockerfile").write_text("FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n")
    monkeypatch.chdir(train)
    for workspace in (str(repo), None):  # in Actions, and where only .git says where the top is
        if workspace:
            monkeypatch.setenv("GITHUB_WORKSPACE", workspace)
        else:
            monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
        result = lg("check", "--format", "github")
        assert result.exit_code == 1
        assert "::error file=services/train/Dockerfile,line=1,title=LG131::" in result.stdout
    # an error that stops the check (exit 2) is an annotation too, on the intent's line
    (train / "lockguard.toml").write_text('python = "3.11"\ncdua = "12.1"\n')
    bad = lg("check", "--format", "github")
    assert bad.exit_code == 2
    assert "::error file=services/train/lockguard.toml,line=2,title=lockguard::" in bad.stdout


def test_counts_are_singular_for_one(project, lg):
    (project / "Dockerfile").write_text("FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n")
    result = lg("check", "--intent", str(project / "lockguard.toml"), "--no-cache")
    assert result.stdout.endswith("1 finding (1 error, 0 warnings): lockguard.toml\n"), (
        result.stdout
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "jinja2", "--format", "json"],
        ["explain", "jinja2", "--json"],
        ["check", "--json"],
        ["check", "--format", "json"],
        ["check", "--no-cache", "--json"],
    ],
)
def test_json_and_format_json_are_one_option_on_every_command(project, lg, argv):
    result = lg(*argv, "--intent", str(project / "lockguard.toml"))
    body = json.loads(result.stdout)
    assert body["schema"] == 1 and body["command"] == argv[0] and result.exit_code == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--json", "--bogus"],
        ["explain", "--json", "--platform"],
        ["check", "--format", "json", "--env"],
        ["resolve", "--json", "--nope"],
    ],
)
def test_a_usage_error_under_json_still_prints_an_envelope(lg, argv):
    result = lg(*argv)
    assert result.exit_code == 2
    body = json.loads(result.stdout)
    assert body["ok"] is False and body["error"]["kind"] == "usage" and body["command"] == argv[0]


def test_a_project_no_index_has_is_bad_input_at_its_intent_line(world, lg, tmp_path):
    intent = world.intent(tmp_path / "p", cuda="none", pip=["jinja2", "transformerz>=1"])
    result = lg("resolve", "--intent", str(intent))
    bad_input(
        result,
        "lockguard.toml:7: pip: no index has a project named transformerz "
        f"({world.pypi.url}/transformerz/: "
        "not found)",
        "did you mean 'transformers'? check the spelling of 'transformerz>=1'",
    )
    assert (
        "conflicting facts" not in result.stderr
        and not (tmp_path / "p" / "requirements.lock").exists()
    )


def test_an_unknown_project_is_told_the_close_names_this_run_read_and_the_cached_root_lists(
    world, lg, tmp_path
):
    # jinja2's page was read in this run; `markupsafe2` is close to a name the index's root
    # listing holds, and only because the cache already has that listing (it is never fetched)
    from lockguard.io.index.cache import Cache, CachedPage

    intent = world.intent(tmp_path / "p", cuda="none", pip=["jinja2", "jinja22"])
    bad_input(lg("resolve", "--intent", str(intent)), "did you mean 'jinja2'? check the spelling")
    intent = world.intent(tmp_path / "q", cuda="none", pip=["jinja2", "flask-loginz"])
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 2 and "did you mean" not in result.stderr
    root = b'{"meta": {"api-version": "1.0"}, "projects": [{"name": "Flask-Login"}]}'
    Cache().put_page(
        CachedPage(f"{world.pypi.url}/", "application/vnd.pypi.simple.v1+json", root, None, None, 0)
    )
    bad_input(lg("resolve", "--intent", str(intent)), "did you mean 'flask-login'?")


@pytest.mark.parametrize(
    "typed, meant",
    [("transformerz", "transformers"), ("torchvison", "torchvision"), ("xformer", "xformers")],
)
def test_the_knowledge_tables_name_the_projects_a_typo_is_closest_to(typed, meant):
    from lockguard.io.knowledge.files import load_knowledge
    from lockguard.knowledge.project_names import project_names
    from lockguard.model.names import close_names

    assert close_names(typed, project_names(load_knowledge()))[0] == meant


def test_an_sdist_that_is_not_an_archive_is_a_build_failure_not_a_crash(world, lg, tmp_path):
    fake = tmp_path / "notarchive-1.0.tar.gz"
    fake.write_bytes(b"this is not a tar file at all\n" * 10)
    world.pypi.add(fake)
    intent = world.intent(tmp_path / "p", cuda="none", pip=["notarchive"])
    bad_input(
        lg("resolve", "--intent", str(intent)),
        "cannot read the metadata of notarchive-1.0.tar.gz",
        "the archive cannot be unpacked",
    )


def test_an_upload_time_that_is_no_date_is_a_broken_page_when_a_cut_off_reads_it(
    world, lg, tmp_path
):
    from tests.support.wheels import build_wheel

    world.pypi.add(build_wheel(tmp_path / "w", "oddtime", "1.0"), upload_time="yesterday at noon")
    project = tmp_path / "p"
    intent = world.intent(
        project, cuda="none", pip=["oddtime"], extra='exclude-newer = "2024-03-01T00:00:00Z"\n'
    )
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 4 and "internal error" not in result.stderr, result.output
    assert "'upload-time' 'yesterday at noon' is not an ISO 8601 date-time" in result.stderr
    world.intent(project, cuda="none", pip=["oddtime"])  # no cut-off: the time is never read
    assert lg("resolve", "--intent", str(intent)).exit_code == 0


def _pip_only_lock_on_another_machine(world, tmp_path, monkeypatch) -> Path:
    project = world.locked(tmp_path / "p", cuda="none", pip=["jinja2"])
    # no copy of what was written
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path / "a-colleagues-clone"))
    return project


def _lg102(lg, project) -> str:
    result = lg("check", "--intent", str(project / "lockguard.toml"), "--format", "json")
    (finding,) = [f for f in json.loads(result.stdout)["data"]["findings"] if f["code"] == "LG102"]
    return finding["message"]


def test_lg102_says_a_pin_changed_when_one_did_without_the_written_copy(
    world, lg, tmp_path, monkeypatch
):
    project = _pip_only_lock_on_another_machine(world, tmp_path, monkeypatch)
    lock = project / "requirements.lock"
    version = re.search(r"^jinja2==(\S+)", lock.read_text(), re.M).group(1)
    edit(lock, f"jinja2=={version}", "jinja2==0.9")
    message = _lg102(lg, project)
    assert "its pins are not the ones lockguard wrote" in message, message
    assert "outside the pins" not in message


def test_lg102_says_the_change_is_outside_the_pins_only_when_the_pins_are_the_written_ones(
    world, lg, tmp_path, monkeypatch
):
    project = _pip_only_lock_on_another_machine(world, tmp_path, monkeypatch)
    lock = project / "requirements.lock"
    lock.write_text(lock.read_text() + "# a comment someone added\n")
    assert "edited by hand outside the pins (comments, hashes" in _lg102(lg, project)


def test_lg102_on_a_lock_without_a_pins_digest_states_no_guess(world, lg, tmp_path, monkeypatch):
    project = _pip_only_lock_on_another_machine(world, tmp_path, monkeypatch)
    lock = project / "requirements.lock"
    pins_line = next(line for line in lock.read_text().splitlines() if "lockguard-pins:" in line)
    edit(lock, pins_line + "\n", "", reseal=True)  # as an older lockguard wrote it
    assert lg("check", "--intent", str(project / "lockguard.toml")).exit_code == 0
    lock.write_text(lock.read_text() + "# a comment\n")
    message = _lg102(lg, project)
    assert message.endswith("was edited by hand: its body changed since lockguard wrote it"), (
        message
    )


def test_a_resolve_says_what_it_is_doing_on_a_ci_log_one_line_per_phase_and_build(
    world, lg, tmp_path
):
    intent = world.intent(tmp_path / "p", cuda="none", pip=["static-sdist", "built-sdist"])
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "resolving linux-64: pip side (2 requirements)" in lines
    build = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("building the metadata of built_sdist-")
    )
    # then one line per phase of the build (issue 31), with the time it has run so far
    built = next(i for i in range(build, len(lines)) if lines[i].startswith("built the metadata"))
    assert re.match(r"built the metadata of built_sdist-\S+ in \d+\.\d s$", lines[built]), lines
    phases = lines[build + 1 : built]
    assert phases and all(re.match(r"  built_sdist-\S+ \[\d+\.\d s\]: ", p) for p in phases)
    assert "running prepare_metadata_for_build_wheel" in phases[-1]
    quiet = lg("resolve", "--intent", str(intent), "--json", "--refresh", "--upgrade")
    assert "resolving" not in quiet.stderr and "building the metadata" not in quiet.stderr


def test_the_live_line_counts_requests_metadata_and_running_builds():
    from lockguard.cli.output import Ui
    from lockguard.cli.resolve_progress import ResolveProgress

    progress = ResolveProgress(Ui(), counts=lambda: (48, 120))
    progress.phase("linux-64: pip side (3 requirements)")
    progress.build("start", "causal_conv1d-1.7.0.tar.gz")
    text = progress.status_text()
    assert text.startswith(
        "resolving linux-64: pip side (3 requirements): 48 requests, 120 metadata read, "
        "building causal_conv1d-1.7.0.tar.gz ("
    ), text
    progress.build("end", "causal_conv1d-1.7.0.tar.gz")
    assert "building" not in progress.status_text()


def test_one_requirement_is_said_in_the_singular(world, lg, tmp_path):
    intent = world.intent(tmp_path / "p", cuda="none", pip=["jinja2"])
    result = lg("resolve", "--intent", str(intent))
    assert result.exit_code == 0, result.stderr
    assert "resolving linux-64: pip side (1 requirement)" in result.stderr.splitlines()


def test_the_intent_is_found_above_the_working_folder_up_to_the_repository(
    project, lg, monkeypatch
):
    """`cd mlproj/src && lockguard check` checks mlproj (as uv finds pyproject.toml), and says
    which intent it used; a folder above the repository is never searched."""
    (project / ".git").mkdir()
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    result = lg("check", "--no-cache")
    assert result.exit_code == 0, result.output
    assert result.stdout == "ok: ../../lockguard.toml: no findings\n"
    (project / "Dockerfile").write_text("FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n")
    found = lg("check", "--no-cache")
    assert found.exit_code == 1 and found.stdout.startswith("../../Dockerfile\n")
    # the repository's top is as far as the search goes
    (project / ".git").rmdir()
    (project / "src" / ".git").mkdir()
    lost = lg("check", "--no-cache")
    assert lost.exit_code == 2 and f"no intent found in {deep}" in lost.stderr
    # init writes the subfolder's own intent (the one above is another project's)
    monkeypatch.chdir(project / "src")
    assert lg("init", "--python", "3.11", "--cuda", "none", "jinja2").exit_code == 0
    assert (project / "src" / "lockguard.toml").exists()
