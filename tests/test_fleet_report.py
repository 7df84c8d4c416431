"""`lockguard fleet report` over records made by the real `lockguard doctor --json` (issue 13,
point 2): identical nodes grouped into a node set, a deviating node named with its column marked
and its fix, the lock judged, unreadable files named with exit 2, the JSON envelope and the HTML
page (parsed)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lockguard.fleet.nodeset import fold, fold_plain
from tests.support.fleet_nodes import EXAMPLE, cuda_toolkit, healthy_venv
from tests.support.native_libs import fake_nccl

INTENT = str(EXAMPLE / "lockguard.toml")


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet-report")
    venv = healthy_venv(root / "venv")
    toolkit = cuda_toolkit(root / "cuda-12.1")
    nccl = fake_nccl(root / "system-nccl", 21903)
    return venv, toolkit, nccl


@pytest.fixture(scope="module")
def reports(machine, tmp_path_factory):
    """gpu01-gpu03 and gpu07 healthy, gpu05 with a system libnccl.so.2 2.19.3 on LD_LIBRARY_PATH."""
    venv, toolkit, nccl = machine
    if nccl is None:
        pytest.skip("no C compiler for the foreign libnccl.so.2")
    folder = tmp_path_factory.mktemp("reports")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CUDA_HOME", str(toolkit))
        for key in ("CUDA_PATH", "LD_LIBRARY_PATH", "LOCKGUARD_CUDA_DRIVER", "LOCKGUARD_GPU_ARCH"):
            patch.delenv(key, raising=False)
        for node in ("gpu01", "gpu02", "gpu03", "gpu07", "gpu05"):
            patch.setenv("LOCKGUARD_NODE", node)
            if node == "gpu05":
                patch.setenv("LD_LIBRARY_PATH", str(nccl.parent))
            from lockguard.cli.boundary import run as lockguard

            out = folder / f"{node}.json"
            _run_into(
                lockguard,
                ["doctor", "--json", "--python", str(venv / "bin" / "python"), "--intent", INTENT],
                out,
            )
    return folder


def _run_into(lockguard, argv, path: Path) -> None:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        lockguard(argv)
    path.write_text(buffer.getvalue())


def test_identical_nodes_are_one_group_and_the_deviating_node_is_named(reports, lg):
    # gpu05's NCCL is a warning
    result = lg("fleet", "report", str(reports), "--format", "json", "--strict")
    assert result.exit_code == 1, result.output
    body = json.loads(result.stdout)
    assert body["command"] == "fleet report" and body["schema"] == 1 and body["exit_code"] == 1
    data = body["data"]
    assert data["nodes"] == 5 and data["matching"] == 4
    first, second = data["groups"]
    assert first["nodeset"] == "gpu[01-03,07]" and first["nodes"] == [
        "gpu01",
        "gpu02",
        "gpu03",
        "gpu07",
    ]
    assert first["status"] == "matches" and first["findings"] == []
    assert second["nodes"] == ["gpu05"] and second["status"] == "deviates"
    assert first["fingerprint"] != second["fingerprint"]
    assert first["facts"]["nccl"] is None and second["facts"]["nccl"] == "2.19.3"
    assert data["deviating"] == ["gpu05"]
    differs = {c["key"] for c in data["columns"] if c["differs"]}
    assert differs == {"nccl", "findings"}
    lg302 = next(f for f in second["findings"] if f["code"] == "LG302")
    assert lg302["severity"] == "warning" and "LD_LIBRARY_PATH" in lg302["hint"]
    assert data["lock"]["body_hash"].startswith("sha256:")


def test_a_warning_alone_matches_without_strict_but_is_shown_with_its_fix(reports, lg):
    """The issue's rule: exit 0 when every node matches the lock and has no error. gpu05 is its own
    group (its NCCL differs), matches the lock, and its warning and fix are still printed."""
    result = lg("fleet", "report", str(reports))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "5 nodes in 2 groups; 5 match the lock, 0 deviate" in text
    assert (
        "  B       1 node  matches the lock (1 warning)  [sha256:" in text
        and "\n     gpu05\n" in text
    )
    assert "LG302 warning: " in text and "fix: remove " in text and "deviating:" not in text
    data = json.loads(lg("fleet", "report", str(reports), "--format", "json").stdout)["data"]
    assert data["deviating"] == [] and data["groups"][1]["notes"] == ["1 warning"]


def test_the_text_report_marks_the_differing_columns_and_gives_the_fix(reports, lg):
    result = lg("fleet", "report", str(reports), "--strict")
    assert result.exit_code == 1
    text = result.stdout
    assert "5 nodes in 2 groups; 4 match the lock, 1 deviates" in text
    assert (
        "  A      4 nodes  matches the lock  [sha256:" in text and "\n     gpu[01-03,07]\n" in text
    )
    assert "  B       1 node  deviates: 1 warning  [sha256:" in text and "\n     gpu05\n" in text
    nccl_row = next(line for line in text.splitlines() if "NCCL" in line and "2.19.3" in line)
    assert nccl_row.startswith("  * NCCL") and "system, reachable" in nccl_row
    driver_row = next(line for line in text.splitlines() if line.strip().startswith("driver"))
    assert driver_row.startswith("    driver")
    assert "LG302 warning: " in text and "fix: remove " in text and "deviating: gpu05" in text


def test_every_node_matching_the_lock_exits_0(reports, lg):
    healthy = [str(reports / f"gpu0{n}.json") for n in (1, 2, 3, 7)]
    result = lg("fleet", "report", *healthy, "--intent", INTENT)
    assert result.exit_code == 0, result.output
    assert "4 nodes in 1 group; 4 match the lock, 0 deviate" in result.stdout
    assert f"({INTENT})" in result.stdout


def test_another_lock_than_the_projects_deviates(reports, lg, tmp_path):
    project = tmp_path / "other"
    project.mkdir()
    for name in ("lockguard.toml", "requirements.lock", "environment.yml", "conda-lock.yml"):
        (project / name).write_text((EXAMPLE / name).read_text())
    lock = project / "requirements.lock"
    lock.write_text(
        lock.read_text().replace("lockguard-body-hash: sha256:", "lockguard-body-hash: sha256:0", 1)
        + "\n# edited\n"
    )
    result = lg(
        "fleet", "report", str(reports / "gpu01.json"), "--intent", str(project / "lockguard.toml")
    )
    assert result.exit_code == 1
    assert "compared with another lock" in result.stdout


def test_a_malformed_report_is_named_with_exit_2_and_the_others_are_merged(reports, lg, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for node in ("gpu01", "gpu02"):
        (folder / f"{node}.json").write_text((reports / f"{node}.json").read_text())
    (folder / "broken.json").write_text(
        '{"schema": 1, "command": "doctor", "data": {"doctor_schema": 1'
    )
    (folder / "other.json").write_text('{"hello": "world"}')
    (folder / "wrong.json").write_text(
        json.dumps(
            {
                "doctor_schema": 1,
                "node": "gpu09",
                "fingerprint": "sha256:0",
                "drift": {},
                "findings": [{"code": "LG302", "severity": "bad"}],
            }
        )
    )
    result = lg("fleet", "report", str(folder), str(tmp_path / "missing.json"))
    assert result.exit_code == 2
    assert "2 nodes in 1 group; 2 match the lock" in result.stdout
    assert f"{folder / 'broken.json'}: not JSON at line 1" in result.stderr
    assert f"{folder / 'other.json'}: not a lockguard node report" in result.stderr
    assert "findings[0]: severity 'bad'" in result.stderr
    assert f"{tmp_path / 'missing.json'}: no such file or folder" in result.stderr
    assert "Traceback" not in result.output


def test_unreachable_and_failed_nodes_deviate_and_are_never_dropped(reports, lg, tmp_path):
    from lockguard.fleet.records import fleet_node_record

    folder = tmp_path / "run"
    folder.mkdir()
    doctor = json.loads((reports / "gpu01.json").read_text())["data"]
    records = [
        fleet_node_record("gpu01", engine="clush", status="ok", doctor=doctor),
        fleet_node_record(
            "gpu11", engine="clush", status="unreachable", message="no answer within 5 s"
        ),
        fleet_node_record(
            "gpu12", engine="clush", status="unreachable", message="no answer within 5 s"
        ),
        fleet_node_record(
            "gpu13", engine="clush", status="failed", message="lockguard is not installed"
        ),
    ]
    for record in records:
        (folder / f"{record['node']}.json").write_text(json.dumps(record))
    data = json.loads(lg("fleet", "report", str(folder), "--format", "json").stdout)["data"]
    assert data["deviating"] == ["gpu11", "gpu12", "gpu13"]
    unreachable = next(g for g in data["groups"] if g["kind"] == "unreachable")
    assert unreachable["nodeset"] == "gpu[11-12]" and unreachable["findings"][0]["code"] == "LG400"
    assert (
        next(g for g in data["groups"] if g["kind"] == "failed")["findings"][0]["code"] == "LG401"
    )


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []
        self.details = 0
        self.classes: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        self.details += tag == "details"
        self.classes.update((attrs.get("class") or "").split())
        for key in ("src", "href"):
            if attrs.get(key):
                self.external.append(attrs[key])

    def handle_data(self, data):
        self.text.append(data)


def test_the_html_page_is_self_contained_with_colours_and_folded_nodes(reports, lg, tmp_path):
    out = tmp_path / "fleet.html"
    result = lg(
        "fleet", "report", str(reports), "--format", "html", "--output", str(out), "--strict"
    )
    assert result.exit_code == 1 and result.stdout == ""
    page = _Page()
    page.feed(out.read_text())
    assert page.tags[0] == "html" and "style" in page.tags and "script" not in page.tags
    assert page.external == []
    assert page.details == 5
    assert {"warning", "differs", "matches", "deviates"} <= page.classes
    text = "".join(page.text)
    assert (
        "gpu[01-03,07]" in text and "2.19.3 system, reachable" in text and "LG302 warning" in text
    )


@pytest.mark.parametrize(
    "names",
    [
        "gpu01,gpu02,gpu03,gpu07",
        "b1,a2,a1",
        "gpu1,gpu2,gpu10,gpu9",
        "n001,n002,n0003",
        "a09,a10,a11",
        "x-1.y,x-2.y",
        "login,gpu-a,node7",
        "r1n1,r1n2,r2n1,r2n2",
    ],
)
def test_the_plain_folding_names_the_same_nodes_as_clustershell(names):
    NodeSet = pytest.importorskip("ClusterShell.NodeSet").NodeSet
    listed = names.split(",")
    plain = fold_plain(listed)
    assert set(NodeSet(plain)) == set(listed)
    if "r1n1" not in names:  # multi-dimensional names: ClusterShell folds both numbers
        assert plain == str(NodeSet.fromlist(listed)) == fold(listed)


def test_folding_examples():
    assert fold_plain(["gpu01", "gpu02", "gpu03", "gpu07"]) == "gpu[01-03,07]"
    assert fold_plain(["gpu9", "gpu10", "gpu11"]) == "gpu[9-11]"
    assert fold_plain(["a", "b"]) == "a,b"
    assert fold([]) == ""


def test_one_number_names_fold_exactly_as_clustershell_prints_them():
    """fold() skips ClusterShell for names with one number (10x faster): the output must not
    change."""
    import random

    NodeSet = pytest.importorskip("ClusterShell.NodeSet").NodeSet
    rng = random.Random(13)
    for _ in range(500):
        prefix, suffix = (
            rng.choice(["gpu", "node-", "n", "rack-gpu"]),
            rng.choice(["", ".ib", "-x"]),
        )
        names = set()
        # mixed zero-padding widths: ClusterShell's hardest case
        for _ in range(rng.randint(1, 30)):
            width, number = rng.choice([0, 0, 2, 3, 4]), rng.randint(0, 1200)
            names.add(
                f"{prefix}{number:0{width}d}{suffix}" if width else f"{prefix}{number}{suffix}"
            )
        names = [*names, *rng.sample(["login", "head", "gw"], rng.randint(0, 2))]
        assert fold(names) == str(NodeSet.fromlist(names)), names


def test_a_problem_whose_message_differs_per_node_is_one_fix():
    from lockguard.fleet.groups import merge
    from lockguard.fleet.records import NodeFinding, NodeReport

    def node(name, path):
        finding = NodeFinding(
            "LG310", "error", f"numpy {path} (lock 1.26.4)", "`lockguard clean-install`"
        )
        return NodeReport(
            name,
            f"{name}.json",
            "ok",
            fingerprint="sha256:1",
            drift={"findings": ["LG310 error"]},
            findings=(finding,),
            lock_hash="sha256:l",
        )

    report = merge([node("g1", "2.0.0"), node("g2", "2.0.0"), node("g3", "1.25.0")])
    (group,) = report.groups
    (fix,) = group.fixes
    assert fix.message == "numpy 2.0.0 (lock 1.26.4) (and 1 other message: see each node's details)"
    assert fix.nodes is None and report.deviating == ["g1", "g2", "g3"]


def test_every_key_a_column_reads_is_fingerprinted_or_compared_when_grouping():
    """Groups are keyed by fingerprint plus NOT_FINGERPRINTED: a column reading any other drift key
    could show one group's first node's value for nodes that differ."""
    from lockguard.doctor.record import FINGERPRINT_KEYS
    from lockguard.fleet import columns

    class Recording(dict):
        def __init__(self):
            super().__init__()
            self.read: set[str] = set()

        def get(self, key, default=None):
            self.read.add(key)
            return "x"

        def __getitem__(self, key):
            self.read.add(key)
            return "x"

    drift = Recording()
    columns.row(drift)
    assert drift.read - set(FINGERPRINT_KEYS) - set(columns.NOT_FINGERPRINTED) == {"findings"}


def _fleet_node_with_check(doctor_findings, check_findings, python="/opt/env/bin/python"):
    doctor = {
        "doctor_schema": 1,
        "node": "g1",
        "node_source": "LOCKGUARD_NODE",
        "fingerprint": "sha256:1",
        "python": python,
        "drift": {"findings": [f"{c} error" for c in doctor_findings]},
        "findings": [{"code": c, "severity": "error", "message": c} for c in doctor_findings],
        "lock": None,
    }
    return {
        "fleet_node": 1,
        "node": "g1",
        "status": "ok",
        "engine": "clush",
        "doctor": doctor,
        "check": {
            "findings": [{"code": c, "severity": "error", "message": c} for c in check_findings]
        },
    }


def test_with_check_env_a_drift_is_listed_once_not_also_as_the_doctors_summary():
    """Issue 25: `fleet --env` listed one drift twice, as the doctor's LG310 and check --env's
    LG201."""
    from lockguard.fleet.records import node_report

    report = node_report(
        _fleet_node_with_check(["LG310", "LG302"], ["LG201"]), file="g1.json", default_node="g1"
    )
    assert sorted(f.code for f in report.findings) == ["LG201", "LG302"]
    alone = node_report(
        {**_fleet_node_with_check(["LG310"], []), "check": None}, file="g1.json", default_node="g1"
    )
    assert [f.code for f in alone.findings] == [
        "LG310"
    ]  # without check --env the summary is all there is


def test_the_drift_table_has_a_row_for_the_interpreter_each_node_ran():
    from lockguard.fleet.groups import merge
    from lockguard.fleet.records import node_report

    first = node_report(
        _fleet_node_with_check([], [], python="/opt/a/bin/python"), file="a.json", default_node="a"
    )
    second = node_report(
        {**_fleet_node_with_check([], [], python="/opt/b/bin/python"), "node": "g2"},
        file="b.json",
        default_node="b",
    )
    report = merge([first, second])
    assert sorted(g.row["interpreter"] for g in report.groups) == [
        "/opt/a/bin/python",
        "/opt/b/bin/python",
    ]
    assert "interpreter" in report.differing
