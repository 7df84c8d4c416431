"""doctor against interpreters that misbehave (issue 16): one that never exits is killed with its
children after a timeout stated in seconds; one that prints garbage, a JSON list or partial JSON is
a clear LG311 error, never a traceback; `--python ./python3` is the file in the working
directory."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lockguard.io.machine.probe_runner import parse_output
from lockguard.io.run import run_bounded
from lockguard.model.probe import ProbeResult
from tests.support.envs import make_venv
from tests.support.native_libs import script


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("hostile") / "env")


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _gone(pid: int) -> bool:
    """The process is gone (or a zombie waiting for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_an_interpreter_that_never_exits_is_killed_with_its_children(lg, tmp_path):
    pidfile = tmp_path / "child.pid"
    python = script(tmp_path / "bin" / "python", f"sleep 1000 &\necho $! > {pidfile}\nwait\n")
    result = lg("doctor", "--python", str(python), "--timeout", "2")
    assert result.exit_code == 1, result.stdout
    assert "did not finish within 2 s; it was killed with its child processes" in result.stdout
    assert "--timeout SECONDS" in result.stdout and "Traceback" not in result.output
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10  # init reaps the orphan; give it a moment
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), f"the probe's child {child} outlived doctor"


def test_the_default_timeout_is_stated_and_bounded():
    from lockguard.cli.doctor_cmd import PROBE_TIMEOUT, SMOKE_TIMEOUT

    assert PROBE_TIMEOUT <= 60 and SMOKE_TIMEOUT <= 180  # was 300 s for every probe


@pytest.mark.parametrize(
    "output, expected",
    [
        ("echo garbage", "line 1 is not JSON: 'garbage'"),
        ("echo '[1, 2, 3]'", "line 1 is not a probe record: '[1, 2, 3]'"),
        ('printf \'{"kind": "base", "data": {"pyth\'', "line 1 is not JSON"),
        ('echo \'{"kind": "base", "data": [1]}\'', "is not a probe record"),
        ('echo \'{"kind": "torch", "data": {"state": "ok"}}\'', "its output held no facts"),
        ("exit 0", "it printed no facts"),
        (
            (
                "echo "
                "'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['"
            ),
            "not JSON",
        ),
    ],
)
def test_an_interpreter_that_prints_what_the_probe_never_writes_is_an_error(
    lg, tmp_path, output, expected
):
    python = script(tmp_path / "bin" / "python", output + "\n")
    result = lg("doctor", "--python", str(python))
    assert (
        result.exit_code == 1
        and "Traceback" not in result.output
        and "internal error" not in result.output
    )
    assert "error  probe" in result.stdout and expected in result.stdout
    body = json.loads(lg("doctor", "--python", str(python), "--json").stdout)
    assert body["exit_code"] == 1 and body["data"]["drift"]["torch_state"] == "unknown"


def test_fields_of_the_wrong_type_are_dropped_and_named():
    result = ProbeResult("/x/python")
    parse_output(
        result,
        "\n".join(
            [
                json.dumps(
                    {
                        "kind": "base",
                        "data": {"python": {"version": "3.11.7"}, "distributions": ["torch"]},
                    }
                ),
                json.dumps(
                    {
                        "kind": "torch",
                        "data": {"state": "ok", "version": "2.1.2", "arch_list": 7, "mapped": "x"},
                    }
                ),
            ]
        ),
    )
    assert (
        "distributions" not in result.base
        and "arch_list" not in result.torch
        and "mapped" not in result.torch
    )
    assert result.crashed == "output not understood"
    assert result.problems == [
        "line 1: base distributions of an unexpected type",
        "line 2: torch arch_list, mapped of an unexpected type",
    ]


def test_a_probe_with_odd_facts_never_crashes_doctor(lg, tmp_path):
    lines = [
        {
            "kind": "base",
            "data": {"python": {"version": "3.11.7"}, "distributions": {"torch": "2.1.2"}},
        },
        {
            "kind": "torch",
            "data": {
                "state": "ok",
                "version": "2.1.2",
                "cuda": "12.1",
                "arch_list": "sm_80",
                "mapped": [1, 2],
                "nccl": "2.18",
                "cudnn": "x",
            },
        },
        {
            "kind": "imports",
            "data": [{"dist": "torch", "module": "torch", "state": "ok"}, "junk", {"state": 3}],
        },
    ]
    body = "\n".join(f"echo '{json.dumps(line)}'" for line in lines)
    python = script(tmp_path / "bin" / "python", body + "\n")
    result = lg("doctor", "--python", str(python))
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert result.exit_code == 1 and "error  probe" in result.stdout
    assert "line 2: torch arch_list, cudnn, mapped, nccl of an unexpected type" in result.stdout


def test_lines_printed_at_start_up_are_a_warning_when_the_facts_are_whole(venv, lg, tmp_path):
    # a .pth file that prints on every start-up: the probe's facts still arrive whole
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_noisy.pth").write_text("import sys; print('hello from a .pth')\n")
    try:
        result = lg("doctor", "--python", str(venv / "bin" / "python"))
    finally:
        (site / "zz_noisy.pth").unlink()
    assert (
        "warn   probe" in result.stdout
        and "line 1 is not JSON: 'hello from a .pth'" in result.stdout
    )


def test_python_with_a_slash_is_relative_to_the_working_directory(lg, tmp_path, venv):
    # ./python3 here runs the venv's interpreter; `python3` on PATH is another one
    script(tmp_path / "python3", f'exec "{venv}/bin/python" "$@"\n')
    result = lg("doctor", "--python", "./python3", "--json")
    body = json.loads(result.stdout)["data"]
    assert body["python"] == str(tmp_path / "python3")
    assert body["facts"]["environment"]["python"]["prefix"] == str(venv)


def test_bad_python_values_are_bad_input(lg, tmp_path):
    missing = lg("doctor", "--python", "./no/such/python")
    assert missing.exit_code == 2 and f"{tmp_path}/no/such/python does not exist" in missing.stderr
    unknown = lg("doctor", "--python", "no-such-python-anywhere")
    assert unknown.exit_code == 2 and "no no-such-python-anywhere on PATH" in unknown.stderr
    folder = lg("doctor", "--python", str(tmp_path))
    assert folder.exit_code == 2 and "is not an executable file" in folder.stderr
    assert "Traceback" not in missing.output + unknown.output + folder.output


def test_output_past_the_cap_kills_the_child():
    done = run_bounded(["sh", "-c", "yes garbage"], timeout=30, cap=1 << 16)
    assert done.flooded and len(done.stdout) == 1 << 16 and "printed more than" in done.problem
    assert done.returncode is not None and done.returncode < 0


def test_a_program_that_does_not_exist_is_a_result():
    done = run_bounded([os.path.join("/nonexistent", "python")], timeout=5)
    assert done.returncode is None and "No such file" in done.problem


def test_an_nvcc_that_hangs_is_killed_and_named(tmp_path):
    from lockguard.io.machine.system_cuda import gather_system

    bin_dir = tmp_path / "hang-bin"
    script(bin_dir / "nvcc", "sleep 1000\n")
    facts = gather_system(
        {"PATH": f"{bin_dir}:/usr/bin:/bin"},
        usr_local_cuda=tmp_path / "none",
        ld_conf_dir=tmp_path,
        ldconfig=None,
        timeout=1,
    )
    assert facts.nvcc[0].version is None
    assert facts.nvcc[0].problem == (
        f"{bin_dir}/nvcc --version did not finish within 1 s; "
        "it was killed with its child processes"
    )
    assert facts.nvcc[0].problem in facts.problems


def test_an_import_that_hangs_is_named(lg, tmp_path):
    from tests.support.fake_torch import install_fake_torch

    venv = make_venv(tmp_path / "hang-env")
    site = next((venv / "lib").glob("python3*/site-packages"))
    install_fake_torch(site, {"version": "2.1.2", "cuda": "12.1"})
    (site / "torch" / "__init__.py").write_text("import time\ntime.sleep(1000)\n")
    result = lg("doctor", "--python", str(venv / "bin" / "python"), "--timeout", "3")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "error  import torch" in result.stdout
    assert "torch 2.1.2 is installed but `import torch` hangs: the probe" in result.stdout
    assert "did not finish within 3 s" in result.stdout


def test_a_flood_of_words_is_summed_up_without_parsing_each_line(monkeypatch):
    """A 16 MiB flood of `yes` output took doctor 20 s: every line went through json.loads."""
    import json

    from lockguard.io.machine import probe_runner
    from lockguard.model.probe import ProbeResult

    parsed = []
    monkeypatch.setattr(
        probe_runner.json,
        "loads",
        lambda text: parsed.append(text) or json.JSONDecoder().decode(text),
    )
    result = ProbeResult("python")
    probe_runner.parse_output(result, "flood\n" * 10_000 + '[1]\n{"kind": "x"\n')
    assert parsed == ["[1]", '{"kind": "x"']  # words are noise without a parse
    assert result.noise == [
        "line 1 is not JSON: 'flood'",
        "line 2 is not JSON: 'flood'",
        "line 3 is not JSON: 'flood'",
        "and 9998 more lines",
    ]
    assert result.problems == ["line 10001 is not a probe record: '[1]'"]
