"""The intent: every error names file, line and key; the hash is canonical."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lockguard.errors import InputError
from lockguard.io.index.conda import matchspec_problem
from lockguard.io.project.intent_file import find_intent, load_intent

GOOD = """\
python = "3.11"
cuda = "12.1"
driver = "535.104.05"
gpu = ["sm_80", "sm_90"]
platforms = ["linux-64"]
channels = ["conda-forge"]
conda = ["cuda-nvcc", "gxx"]
pip = ["torch==2.1.*", "deepspeed==0.13.1", "transformers==4.36.2"]
exclude-newer = "2024-03-01T00:00:00Z"

[[dependency-metadata]]
name = "deepspeed"
version = "0.13.1"
requires-dist = ["hjson", "ninja", "numpy", "torch"]

[outputs]
environment = "environment.yml"
"""


def write(tmp_path: Path, text: str, name: str = "lockguard.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(path: Path):
    return load_intent(path, validate_matchspec=matchspec_problem)


def test_good_intent_parses_into_frozen_values(tmp_path):
    intent = load(write(tmp_path, GOOD))
    assert str(intent.python) == "3.11"
    assert str(intent.cuda) == "12.1"
    assert str(intent.driver) == "535.104.05"
    assert [str(a) for a in intent.gpu] == ["sm_80", "sm_90"]
    assert intent.pip == ("torch==2.1.*", "deepspeed==0.13.1", "transformers==4.36.2")
    assert intent.dependency_metadata[0].name == "deepspeed"
    assert intent.exclude_newer.year == 2024
    with pytest.raises(AttributeError):
        intent.python = "3.12"  # frozen


@pytest.mark.parametrize(
    ("text", "line", "key", "fragment", "hint"),
    [
        (
            'python = "3.11"\ncdua = "12.1"\n',
            2,
            "cdua",
            "'cdua' is not a valid key",
            "did you mean 'cuda'?",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nchanels = []\n',
            3,
            "chanels",
            "not a valid key",
            "did you mean 'channels'?",
        ),
        (
            'python = "3.11"\ncuda = "twelve"\n',
            2,
            "cuda",
            "'twelve' is not a CUDA version",
            '"none"',
        ),
        ('python = "three"\ncuda = "12.1"\n', 1, "python", "not a Python version", "3.11"),
        ('python = "3.1"\ncuda = "12.1"\n', 1, "python", "lockguard locks Python 3.7", "3.11"),
        ('python = "2.7"\ncuda = "12.1"\n', 1, "python", "Python 2.7 cannot be locked", "3.7"),
        ('python = "3.11.7"\ncuda = "12.1"\n', 1, "python", "a patch release", '"3.11"'),
        ('python = "3.40"\ncuda = "12.1"\n', 1, "python", "not released yet", "3.14"),
        ('python = 3.11\ncuda = "12.1"\n', 1, "python", "must be a string", 'python = "3.11"'),
        (
            'python = "3.11"\ncuda = "12.1"\ndriver = "latest"\n',
            3,
            "driver",
            "not an NVIDIA driver version",
            "535.104.05",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\ngpu = ["sm_80", "ampere"]\n',
            3,
            "gpu",
            "'ampere' is not a GPU architecture",
            "sm_80",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nplatforms = ["linux64"]\n',
            3,
            "platforms",
            "not a conda platform",
            "did you mean 'linux-64'?",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nchannels = ["conda forge"]\n',
            3,
            "channels",
            "not a channel name or URL",
            None,
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nconda = ["cuda-nvcc >>=12"]\n',
            3,
            "conda",
            "not a valid conda MatchSpec",
            None,
        ),
        (
            'python = "3.11"\ncuda = "12.1"\npip = [\n  "torch==2.1.*",\n  "deepspeed===",\n]\n',
            5,
            "pip",
            "'deepspeed===' is not a valid requirement",
            "PEP 508",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\npip = "torch"\n',
            3,
            "pip",
            "must be a list of strings",
            'pip = ["torch"]',
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nindexes = ["pypi.org/simple"]\n',
            3,
            "indexes",
            "not an http(s):// or file:// URL",
            None,
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nexclude-newer = "yesterday"\n',
            3,
            "exclude-newer",
            "is neither a date-time nor a span",
            "7 days",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nexclude-newer = "2024-03-01T00:00:00"\n',
            3,
            "exclude-newer",
            "no time zone",
            "Z",
        ),
        (
            'python = "3.11"\ncuda = "12.1"\nconda-from-knowledge = "yes"\n',
            3,
            "conda-from-knowledge",
            "true or false",
            None,
        ),
        ('python = "3.11"\ncuda = "12.1"\nglibc = "2"\n', 3, "glibc", "not a glibc version", None),
        (
            'python = "3.11"\ncuda = "12.1"\n\n[outputs]\nenviroment = "env.yml"\n',
            5,
            "outputs.enviroment",
            "not a valid key",
            "did you mean 'environment'?",
        ),
        (
            (
                'python = "3.11"\ncuda = "12.1"\n\n'
                '[[dependency-metadata]]\nname = "a"\nversion = "1"\n\n'
                '[[dependency-metadata]]\nname = "b"\nversion = "1"\nrequires_dist = []\n'
            ),
            11,
            "dependency-metadata.requires_dist",
            "not a valid key",
            "did you mean 'requires-dist'?",
        ),
        (
            (
                'python = "3.11"\ncuda = "12.1"\n\n'
                '[[dependency-metadata]]\nname = "a"\nversion = "one"\n'
            ),
            6,
            "dependency-metadata.version",
            "not a PEP 440 version",
            None,
        ),
    ],
)
def test_every_error_names_file_line_and_key(tmp_path, text, line, key, fragment, hint):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load(path)
    error = info.value
    assert error.file == str(path)
    assert error.line == line, error.message
    assert error.key == key
    assert fragment in error.message
    assert f"{path}:{line}" in error.message
    if hint:
        assert hint in error.hint


def test_missing_required_key_and_syntax_error(tmp_path):
    with pytest.raises(InputError) as info:
        load(write(tmp_path, 'cuda = "12.1"\n'))
    assert info.value.key == "python" and "required key 'python'" in info.value.message
    with pytest.raises(InputError) as info:
        load(write(tmp_path, 'python = "3.11"\ncuda = \n'))
    assert info.value.line == 2 and "not valid TOML" in info.value.message


def test_pyproject_table_lines_are_absolute(tmp_path):
    path = write(
        tmp_path,
        '[project]\nname = "x"\n\n[tool.lockguard]\npython = "3.11"\ncdua = "12.1"\n',
        "pyproject.toml",
    )
    with pytest.raises(InputError) as info:
        load(path)
    assert info.value.line == 6 and "did you mean 'cuda'" in info.value.hint


def test_find_intent_prefers_lockguard_toml_then_pyproject(tmp_path):
    with pytest.raises(InputError) as info:
        find_intent(tmp_path)
    assert "lockguard init" in info.value.hint
    write(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    with pytest.raises(InputError):
        find_intent(tmp_path)  # a pyproject without [tool.lockguard] is not an intent
    write(tmp_path, '[tool.lockguard]\npython = "3.11"\ncuda = "none"\n', "pyproject.toml")
    assert find_intent(tmp_path).name == "pyproject.toml"
    write(tmp_path, 'python = "3.11"\ncuda = "none"\n')
    assert find_intent(tmp_path).name == "lockguard.toml"


def test_hash_ignores_order_comments_whitespace_and_explicit_defaults(tmp_path):
    base = load(write(tmp_path, GOOD)).hash
    shuffled = """\
    # the same intent, reordered and commented
    pip = [ "transformers==4.36.2",   "Deepspeed==0.13.1", "torch==2.1.*" ]
    conda = ["gxx", "cuda-nvcc"]
    gpu = ["sm_90", "sm_80"]   # order of GPUs does not matter
    exclude-newer = 2024-03-01T00:00:00Z
    driver = "535.104.05"
    cuda = "12.1"
    python = "3.11"
    channels = ["conda-forge"]
    indexes = ["https://pypi.org/simple"]

    [outputs]
    environment = "environment.yml"

    [[dependency-metadata]]
    requires-dist = ["torch", "numpy", "ninja", "hjson"]
    version = "0.13.1"
    name = "deepspeed"
    """
    assert load(write(tmp_path, shuffled)).hash == base


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('cuda = "12.1"', 'cuda = "11.8"'),
        ('"deepspeed==0.13.1"', '"deepspeed==0.13.2"'),
        ('channels = ["conda-forge"]', 'channels = ["conda-forge", "nvidia"]'),
        ('driver = "535.104.05"', 'driver = "550.54.14"'),
        ('gpu = ["sm_80", "sm_90"]', 'gpu = ["sm_80"]'),
        (
            'requires-dist = ["hjson", "ninja", "numpy", "torch"]',
            'requires-dist = ["hjson", "numpy", "torch"]',
        ),
    ],
)
def test_hash_changes_with_every_meaningful_edit(tmp_path, old, new):
    base = load(write(tmp_path, GOOD)).hash
    assert old in GOOD
    assert load(write(tmp_path, GOOD.replace(old, new))).hash != base


def test_channel_order_is_meaningful(tmp_path):
    a = load(write(tmp_path, 'python = "3.11"\ncuda = "none"\nchannels = ["a", "b"]\n')).hash
    b = load(write(tmp_path, 'python = "3.11"\ncuda = "none"\nchannels = ["b", "a"]\n')).hash
    assert a != b


def test_cli_reports_intent_errors_with_exit_2_and_no_traceback(tmp_path, lg_process):
    write(tmp_path, 'python = "3.11"\ncdua = "12.1"\n')
    result = lg_process("resolve", cwd=tmp_path)
    assert result.exit_code == 2
    assert "lockguard.toml:2" in result.stderr
    assert "did you mean 'cuda'?" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("spelling", ['"2024-02-29"', "2024-02-29"])
def test_a_plain_date_for_exclude_newer_includes_that_whole_day_in_utc(tmp_path, spelling):
    """`exclude-newer = "2024-02-29"` (or a TOML date): uploads before the next day's start, as
    uv reads a date alone (uv in the machine's time zone, lockguard in UTC on every machine):
    2024-03-01T00:00:00Z, the same intent hash as that date-time."""
    plain = load(write(tmp_path, GOOD.replace('"2024-03-01T00:00:00Z"', spelling)))
    assert plain.exclude_newer is not None
    assert plain.exclude_newer.isoformat() == "2024-03-01T00:00:00+00:00"
    assert plain.hash == load(write(tmp_path, GOOD)).hash


@pytest.mark.parametrize(
    "python, fragment",
    [
        ("3.1", "hint: did you mean 3.10, 3.11, 3.12, 3.13 or 3.14?"),
        ("2.7", "Python 2.7 cannot be locked"),
        ("3.11.7", "'3.11.7' is a patch release: the intent names major.minor only"),
    ],
)
def test_init_refuses_a_python_no_lock_can_target_and_writes_nothing(
    lg_process, tmp_path, python, fragment
):
    result = lg_process("init", "--python", python, "torch", cwd=tmp_path)
    assert result.exit_code == 2, result.stderr
    assert fragment in result.stderr and "--python" in result.stderr
    assert not (tmp_path / "lockguard.toml").exists()


def test_a_byte_order_mark_is_named_with_the_command_that_removes_it(tmp_path):
    path = tmp_path / "lockguard.toml"
    path.write_bytes(b'\xef\xbb\xbfpython = "3.11"\ncuda = "none"\n')
    with pytest.raises(InputError) as error:
        load(path)
    assert error.value.line == 1
    assert "byte order mark (BOM)" in error.value.message
    assert "without BOM" in (error.value.hint or "")
