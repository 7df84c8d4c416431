"""Each command's session called as a library would call it: no click, no CliRunner, a tiny real
project, and assertions on the outcome object the session returns (issue 34 §1)."""

from __future__ import annotations

import pytest

from tests.support.releases import Releases, pins, write_intent


class Said:
    """The Messages protocol (app/reporting.py), kept in order."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def warn(self, message: str) -> None:
        self.lines.append(("warn", message))

    def debug(self, message: str) -> None:
        self.lines.append(("debug", message))

    def done(self) -> None:
        return None


@pytest.fixture
def releases(local_index, tmp_path) -> Releases:
    found = Releases(local_index, tmp_path / "wheels")
    found.publish("app", "1.0", requires=["lib<2"])
    found.publish("lib", "1.0")
    found.publish("lib", "1.1")
    return found


def test_resolve_writes_the_lock_then_check_only_finds_it_current_then_stale(releases, tmp_path):
    from lockguard.app.resolve_session import resolve

    project = tmp_path / "p"
    intent = write_intent(project, releases.index.url, ["app"])
    said = Said()
    written = resolve(said, intent_path=intent)
    assert not written.checked
    assert project / "requirements.lock" in written.written
    assert [str(p) for p in written.written] == written.summary["written"]
    assert not written.changes.unchanged
    assert pins(project) == {"app": "1.0", "lib": "1.1"}
    assert ("info", f"wrote {project / 'requirements.lock'}") in said.lines

    current = resolve(Said(), intent_path=intent, check_only=True)
    assert current.checked and current.current and current.exit_code == 0
    assert current.written == () and current.stale == () and current.vanished == ()

    write_intent(project, releases.index.url, ["app", "lib<1.1"])
    before = (project / "requirements.lock").read_bytes()
    stale = resolve(Said(), intent_path=intent, check_only=True)
    assert not stale.current and stale.exit_code == 1
    assert project / "requirements.lock" in stale.stale
    assert not stale.changes.unchanged
    assert (project / "requirements.lock").read_bytes() == before  # --check writes nothing


def test_resolve_names_an_unknown_project_at_its_intent_line(releases, tmp_path):
    from lockguard.app.resolve_session import resolve
    from lockguard.errors import InputError

    intent = write_intent(tmp_path / "p", releases.index.url, ["app", "nosuchproject"])
    with pytest.raises(InputError, match=r"lockguard.toml:\d+: pip: no index has a project named"):
        resolve(Said(), intent_path=intent)
    assert not (tmp_path / "p" / "requirements.lock").exists()


def test_the_resolve_recorder_forwards_every_message_and_records_info_and_warnings():
    from lockguard.app.reporting import Messages
    from lockguard.app.resolve_session import _Recorder

    said = Said()
    recorder = _Recorder(said)
    assert Messages in type(recorder).__mro__  # the protocol, implemented explicitly
    recorder.info("i")
    recorder.debug("d")
    recorder.warn("w")
    recorder.done()
    assert said.lines == [("info", "i"), ("debug", "d"), ("warn", "w")]
    assert recorder.messages == [("info", "i"), ("warn", "w")]
    assert not hasattr(_Recorder, "__getattr__")  # an explicit type: nothing forwarded unseen


def test_init_writes_the_intent_and_says_what_it_holds(tmp_path):
    from lockguard.app.init_session import init

    project = tmp_path / "My Project"
    project.mkdir()
    said = Said()
    outcome = init(said, root=project, python="3.11", cuda="12.1", packages=("torch", "numpy"))
    assert outcome.target == project / "lockguard.toml" and not outcome.in_pyproject
    assert (outcome.python, outcome.cuda, outcome.pip, outcome.conda) == ("3.11", "12.1", 2, 0)
    text = outcome.target.read_text()
    assert 'name = "My-Project"' in text and '"torch"' in text
    assert said.lines == []  # the line init prints is the command's to render


def test_init_adopts_a_file_and_the_options_given_next_to_it(tmp_path):
    from lockguard.app.init_session import init

    project = tmp_path / "p"
    project.mkdir()
    (project / "requirements.txt").write_text("numpy==1.26.4\n")
    outcome = init(
        Said(),
        root=project,
        python="3.11",
        from_files=(project / "requirements.txt",),
        packages=("jinja2",),
        pylock=True,
    )
    assert outcome.pip == 2
    text = outcome.target.read_text()
    assert "numpy==1.26.4" in text and "jinja2" in text and "pylock.toml" in text


def test_init_blames_the_option_and_writes_nothing(tmp_path):
    from lockguard.app.init_session import init
    from lockguard.errors import InputError

    with pytest.raises(InputError, match=r"^--cuda: ") as raised:
        init(Said(), root=tmp_path, python="3.11", cuda="banana")
    assert "nothing was written to lockguard.toml" in (raised.value.hint or "")
    assert not (tmp_path / "lockguard.toml").exists()
    with pytest.raises(InputError, match="--top-level-only goes with --from-env"):
        init(Said(), root=tmp_path, top_level_only=True)


def test_check_shows_the_findings_and_keeps_a_plain_result(releases, tmp_path, monkeypatch):
    from lockguard.app.check_session import check
    from lockguard.app.resolve_session import resolve
    from lockguard.io.project.check_cache import CheckResults

    project = tmp_path / "p"
    intent = write_intent(project, releases.index.url, ["app"])
    resolve(Said(), intent_path=intent)
    monkeypatch.chdir(project)
    shown = []

    def show(checked):
        shown.append(checked)
        return "output\n", 1 if checked.findings else 0

    assert check(Said(), intent_path=None, show=show, remember_as=("check",)) == 0
    kept = CheckResults(("check",)).lookup()  # what cli/boundary.py replays before click
    assert kept is not None and CheckResults(("check", "--strict")).lookup() is None
    assert shown[-1].findings == () and shown[-1].shown == "lockguard.toml"
    assert shown[-1].lock_files == ("requirements.lock",)

    lock = project / "requirements.lock"
    lock.write_text(lock.read_text().replace("lib==1.1", "lib==1.0"))
    assert check(Said(), intent_path=None, show=show) == 1
    assert any(f.file == "requirements.lock" for f in shown[-1].findings)


def test_diff_compares_two_lock_files_and_refuses_one(releases, tmp_path):
    from lockguard.app.diff_session import diff
    from lockguard.app.resolve_session import resolve
    from lockguard.check.changes_render import text_lines
    from lockguard.errors import InputError

    project = tmp_path / "p"
    intent = write_intent(project, releases.index.url, ["app"])
    resolve(Said(), intent_path=intent)
    old = tmp_path / "old" / "requirements.lock"
    old.parent.mkdir()
    old.write_bytes((project / "requirements.lock").read_bytes())
    same = diff(old, project / "requirements.lock")
    assert same.changes.unchanged and same.exit_code == 0

    write_intent(project, releases.index.url, ["app", "lib<1.1"])
    resolve(Said(), intent_path=intent)
    moved = diff(old, project / "requirements.lock")
    assert moved.exit_code == 1
    assert moved.title == f"Lock changes: {old} -> {project / 'requirements.lock'}"
    assert any("lib" in line and "1.1" in line for line in text_lines(moved.changes))
    with pytest.raises(InputError, match="one lock file is not enough to compare"):
        diff(old, None)


def test_fleet_run_merges_what_every_node_answered(tmp_path):
    pytest.importorskip("ClusterShell")
    from lockguard.app import fleet_session
    from tests.support.native_libs import script

    broken = script(tmp_path / "bin" / "lockguard", "echo garbage; exit 3\n")
    said = Said()
    report = fleet_session.run(
        said,
        engine="clush",
        env_prefix=None,
        python_exe=None,
        lockguard_cmd=str(broken),
        intent_path=None,
        settings={"hosts": "gpu[01-02]", "worker": "exec", "fanout": None},
        timeout=60,
        out_dir=tmp_path / "out",
        strict=False,
    )
    assert report.exit_code == 1 and len(report.groups) == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gpu01.json", "gpu02.json"]
    assert said.lines[1] == ("info", fleet_session.UNNAMED_ENV)
    assert said.lines[-1] == ("info", f"wrote 2 node reports to {tmp_path / 'out'}")


def test_fleet_report_lists_an_unreadable_file_and_manifest_ships_the_project(releases, tmp_path):
    from lockguard.app import fleet_session

    (tmp_path / "bad.json").write_text("{not json")
    merged = fleet_session.report([tmp_path / "bad.json"], intent_path=None, strict=False)
    assert [file for file, _why in merged.unreadable] == [str(tmp_path / "bad.json")]
    assert merged.groups == () or not merged.groups

    intent = write_intent(tmp_path / "p", releases.index.url, ["app"])
    text = fleet_session.manifest(
        intent_path=intent,
        env_prefix=None,
        python_exe=None,
        lockguard_cmd=None,
        run_id="r1",
        settings={"image": "img:1", "kind": "daemonset", "node_selector": ()},
    )
    assert "kind: ConfigMap" in text and "lockguard.dev/fleet-run: r1" in text
    assert "lockguard.toml" in text


class Steps:
    """The InstallProgress protocol (app/reporting.py), kept in order."""

    live = False

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def step(self, message: str) -> None:
        self.lines.append(("step", message))

    def say(self, message: str) -> None:
        self.lines.append(("say", message))

    def warn(self, message: str) -> None:
        self.lines.append(("warn", message))

    def close(self) -> None:
        return None


def _installed(venv) -> dict[str, str]:
    from tests.support.envs import site_packages

    found = {}
    for info in site_packages(venv).glob("*.dist-info"):
        name, version = info.name[: -len(".dist-info")].rsplit("-", 1)
        found[name.lower()] = version
    return {n: v for n, v in found.items() if n in ("app", "lib")}


def _clean_install(intent, venv, steps, **options):
    from lockguard.app import install_session

    shown, asked = [], []
    settings = {"dry_run": False, "yes": True, "strict": False, **options}
    outcome = install_session.clean_install(
        intent_path=intent,
        prefix=venv,
        python_exe=None,
        from_file=None,
        installer=install_session.DEFAULT_INSTALLER,
        verify_files=False,
        wait=False,
        progress=steps,
        show_plan=shown.append,
        confirm=lambda: asked.append(True),
        warn=steps.warn,
        **settings,
    )
    return outcome, shown, asked


def test_clean_install_then_restore_sessions_on_a_real_venv(releases, venv, tmp_path):
    from lockguard.app.resolve_session import resolve
    from lockguard.app.restore_session import Listed, Pruned, Restored, restore
    from lockguard.errors import InputError
    from tests.support.envs import pip_install

    project = tmp_path / "p"
    intent = write_intent(project, releases.index.url, ["app"])
    resolve(Said(), intent_path=intent)
    pip_install(venv, releases.index.url, "lib==1.0")  # an older lib, no app
    before = _installed(venv)
    assert before == {"lib": "1.0"}

    # a dry run: the plan, nothing shown to confirm, nothing changed
    steps = Steps()
    dry, shown, asked = _clean_install(intent, venv, steps, dry_run=True, yes=False)
    assert dry.failing == 0 and dry.applied is None and dry.errors == () and not shown + asked
    assert dry.plan is not None and dry.prefix == venv.resolve()
    assert sorted(dry.plan.install) == ["app==1.0", "lib==1.1"]
    assert [(o.name, o.reason) for o in dry.plan.outgoing] == [("lib", "upgrade to 1.1")]
    assert _installed(venv) == before

    # the run: the plan shown, confirm asked (no --yes), the lock applied
    applied, shown, asked = _clean_install(intent, venv, steps, yes=False)
    assert applied.failing == 0 and applied.applied is not None and asked == [True]
    assert shown == [applied.plan]
    assert _installed(venv) == {"app": "1.0", "lib": "1.1"}
    run_id = applied.applied.quarantine
    again, shown, _ = _clean_install(intent, venv, steps)
    assert again.plan is not None and again.plan.changes_nothing and again.applied is None
    assert not shown  # nothing to change: no plan to show

    def session(**options):
        settings = {
            "quarantine_id": None,
            "list_only": False,
            "prune_runs": False,
            "keep": 0,
            "wait": False,
            "on_wait": steps.say,
            "confirm_prune": lambda *_: None,
            **options,
        }
        return restore(prefix=venv, **settings)

    listed = session(list_only=True)
    assert isinstance(listed, Listed) and [q.id for q, _size in listed.runs] == [run_id]
    undone = session()
    assert isinstance(undone, Restored) and undone.id == run_id
    assert _installed(venv) == before  # byte for byte is test_clean_install's business
    with pytest.raises(InputError, match="nothing to restore"):
        session()
    asked_prune = []
    pruned = session(prune_runs=True, confirm_prune=lambda root, p: asked_prune.append(p))
    assert isinstance(pruned, Pruned) and pruned.gone == (run_id,) and pruned.left == ()
    assert asked_prune == [pruned.pruning] and pruned.pruning.going[0].id == run_id
    assert session(list_only=True).runs == ()


def test_clean_install_session_refuses_without_a_target_and_fails_on_an_error_it_leaves(
    releases, venv, tmp_path
):
    from lockguard.app.resolve_session import resolve
    from lockguard.errors import InputError
    from tests.support.envs import site_packages

    project = tmp_path / "p"
    intent = write_intent(project, releases.index.url, ["app"])
    resolve(Said(), intent_path=intent)
    with pytest.raises(InputError, match="exactly one of --prefix PREFIX or --python EXE"):
        _clean_install(intent, None, Steps())
    assert _clean_install(intent, venv, Steps())[0].failing == 0
    # a RECORD row out of the prefix: outside what clean-install changes, an error as in check
    record = next(site_packages(venv).glob("app-*.dist-info")) / "RECORD"
    record.write_text(record.read_text() + "../../../../../../../../etc/hostname,,\n")
    outcome, shown, _ = _clean_install(intent, venv, Steps())
    assert outcome.failing == 1 and outcome.applied is None and not shown
    assert [f.code for f in outcome.errors] == ["LG219"]
    strict, _, _ = _clean_install(intent, venv, Steps(), dry_run=True, strict=True)
    assert strict.failing == 1
