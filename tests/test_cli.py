"""The CLI: one error boundary, exit codes, JSON envelope, stdout/stderr split, NO_COLOR."""

from __future__ import annotations

import json


def test_version_and_help(lg):
    assert lg("--version").exit_code == 0
    result = lg("--help")
    assert result.exit_code == 0
    for name in (
        "init",
        "resolve",
        "check",
        "clean-install",
        "restore",
        "doctor",
        "explain",
        "constraints",
    ):
        assert name in result.stdout


def test_usage_error_is_exit_2(lg):
    result = lg("constraints", "show", "gpu")
    assert result.exit_code == 2 and "Invalid value" in result.stderr
    assert lg("no-such-command").exit_code == 2


def test_constraints_show_text_goes_to_stdout(lg):
    result = lg("constraints", "show", "torch", "2.1")
    assert result.exit_code == 0
    assert "cu118" in result.stdout and "2.18.1" in result.stdout
    assert "\033[" not in result.stdout  # NO_COLOR (set by the test environment)


def test_constraints_show_json_envelope(lg):
    result = lg("constraints", "show", "cuda", "12.1", "--json")
    body = json.loads(result.stdout)
    assert body["schema"] == 1 and body["ok"] is True and body["command"] == "constraints show"
    assert body["data"]["min_driver"] == "525.60.13"
    assert "cuda-version=12.1" in body["data"]["conda_specs"]


def test_user_error_in_json_mode_is_an_envelope_too(lg):
    result = lg("constraints", "show", "torch", "1.13", "--json")
    assert result.exit_code == 2
    body = json.loads(result.stdout)
    assert body["ok"] is False and body["error"]["kind"] == "bad-input"
    assert "not in the knowledge" in result.stderr


def test_internal_error_has_no_traceback_unless_verbose(lg, monkeypatch):
    from lockguard.cli import constraints_views as show

    def boom(*_args, **_kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(show, "overview", boom)
    quiet = lg("constraints", "show")
    assert quiet.exit_code == 70
    assert (
        "internal error: RuntimeError: kaboom" in quiet.stderr and "Traceback" not in quiet.stderr
    )
    loud = lg("-v", "constraints", "show")
    assert loud.exit_code == 70 and "Traceback" in loud.stderr


def test_console_script_user_error_has_no_traceback(lg_process, tmp_path):
    result = lg_process("resolve", cwd=tmp_path)
    assert result.exit_code == 2
    assert "no intent found" in result.stderr and "Traceback" not in result.stderr
