"""`lockguard export --format cyclonedx`: the lock as a CycloneDX 1.6 SBOM, run as a child process
and read by a real consumer (cyclonedx-python-lib's strict JSON validator for schema 1.6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

from lockguard.io.knowledge.files import load_knowledge
from lockguard.lockfiles import conda_lock, pylock, requirements_lock
from lockguard.lockfiles.cyclonedx import (
    CondaPackage,
    FileRef,
    PipPackage,
    PlatformPackages,
    Sbom,
    channel_of,
    conda_purl,
    pypi_purl,
    render,
)
from lockguard.model.versions import CudaVersion
from tests.support.conda_channel import build_channel
from tests.support.locked import copy_project, edit, make_locked_project
from tests.support.world import running_world

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gpu-training"


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    with running_world(root) as world:
        channel = build_channel(root / "conda")
        solved = make_locked_project(root / "solved", world, channel)
        knowledge_only = make_locked_project(root / "ko", world, channel, knowledge_only=True)
        # a plain venv's lock for two platforms: requirements.*.lock only, no file URL recorded
        two = world.locked(
            root / "two", pip=["jinja2"], cuda="none", platforms=["linux-64", "linux-aarch64"]
        )
        # a lock with pylock.toml, which records every file's URL
        pylock = world.locked(
            root / "pylock",
            pip=["jinja2"],
            cuda="none",
            extra='[outputs]\npylock = "pylock.toml"\n',
        )
        yield {"solved": solved, "knowledge-only": knowledge_only, "two": two, "pylock": pylock}


@pytest.fixture
def project(templates, tmp_path) -> Path:
    return copy_project(templates["solved"], tmp_path / "project")


def export(lg_process, project: Path, *args: str):
    return lg_process(
        "export", "--format", "cyclonedx", "--intent", str(project / "lockguard.toml"), *args
    )


def valid(text: str) -> dict:
    """The SBOM, after the real consumer's schema 1.6 validator accepted it."""
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert error is None, error
    return json.loads(text)


def properties(component: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in component.get("properties", []):
        out.setdefault(item["name"], []).append(item["value"])
    return out


def test_every_pin_once_with_its_purl_and_hashes(project, lg_process):
    result = export(lg_process, project)
    assert result.exit_code == 0, result.stderr
    bom = valid(result.stdout)
    assert bom["specVersion"] == "1.6" and bom["serialNumber"].startswith("urn:uuid:")
    pip = [c for c in bom["components"] if c["purl"].startswith("pkg:pypi/")]
    lock = requirements_lock.parse((project / "requirements.lock").read_text())
    assert len(pip) == len(lock.entries)
    for name, entry in lock.entries.items():
        found = [c for c in pip if c["name"] == name]
        assert len(found) == 1, name
        (component,) = found
        assert component["version"] == entry.version
        assert component["purl"] == f"pkg:pypi/{name}@{entry.version.replace('+', '%2B')}"
        assert {h["content"] for h in component["hashes"]} == set(entry.hashes), name
        assert {h["alg"] for h in component["hashes"]} == {"SHA-256"}
        # the file conda-lock.yml records: its URL and the hash of that file
        (reference,) = component["externalReferences"]
        assert reference["type"] == "distribution" and reference["url"].startswith("http://127")
        assert reference["hashes"][0]["content"] in entry.hashes
        assert properties(component)["lockguard:platform"] == ["linux-64"]
        assert PackageURL.from_string(component["purl"]).to_string() == component["purl"]
    # who requires whom: requirements.lock's `# via`, the project at the root
    depends = {d["ref"]: set(d["dependsOn"]) for d in bom["dependencies"]}
    ref = {c["name"]: c["bom-ref"] for c in pip}
    assert {ref["torch"], ref["numpy"], ref["jinja2"]} <= depends["project:lockguard"]
    assert ref["markupsafe"] in depends[ref["jinja2"]]
    assert ref["jinja2"] in depends[ref["torch"]]


def test_conda_records_with_their_channel_build_and_hashes(project, lg_process):
    bom = valid(export(lg_process, project).stdout)
    conda = {c["name"]: c for c in bom["components"] if c["purl"].startswith("pkg:conda/")}
    records = [
        p
        for p in conda_lock.read((project / "conda-lock.yml").read_text())["package"]
        if p["manager"] == "conda"
    ]
    assert records and set(conda) == {r["name"] for r in records}
    channel = (project / "lockguard.toml").read_text().split('channels = ["', 1)[1].split('"')[0]
    for record in records:
        component = conda[record["name"]]
        purl = PackageURL.from_string(component["purl"])
        assert purl.type == "conda" and purl.version == str(record["version"])
        assert purl.qualifiers["build"] == record["build"]
        assert purl.qualifiers["channel"] == channel
        assert purl.qualifiers["subdir"] == record["url"].rsplit("/", 2)[-2]
        assert properties(component)["lockguard:conda-channel"] == [channel]
        hashes = {h["alg"]: h["content"] for h in component["hashes"]}
        assert hashes == {"SHA-256": record["hash"]["sha256"], "MD5": record["hash"]["md5"]}
        assert component["externalReferences"][0]["url"] == record["url"]
    assert properties(bom["metadata"]["component"])["lockguard:conda-side"] == ["solved"]


def test_a_conda_side_pinned_from_knowledge_says_so_and_invents_no_hash(
    templates, tmp_path, lg_process
):
    project = copy_project(templates["knowledge-only"], tmp_path / "ko")
    bom = valid(export(lg_process, project).stdout)
    conda = {c["name"]: c for c in bom["components"] if c["purl"].startswith("pkg:conda/")}
    assert {"python", "cuda-version", "pip"} <= set(conda)
    for component in conda.values():
        assert "hashes" not in component and "externalReferences" not in component
        said = properties(component)
        assert said["lockguard:conda-side"][0].startswith("knowledge-only")
        assert said["lockguard:conda-spec"][0].startswith(component["name"])
        assert "build" not in PackageURL.from_string(component["purl"]).qualifiers
    assert conda["python"]["purl"].startswith("pkg:conda/python@3.11?channel=file:///")
    assert "version" not in conda["pip"]  # `pip` pins no version: none is invented
    assert properties(bom["metadata"]["component"])["lockguard:conda-side"] == [
        "knowledge-only (not solved)"
    ]


def test_the_cuda_stack_facts_are_properties_of_the_metadata_component(project, lg_process):
    bom = valid(export(lg_process, project).stdout)
    facts = {k: v[0] for k, v in properties(bom["metadata"]["component"]).items()}
    lock = requirements_lock.parse((project / "requirements.lock").read_text()).entries
    floor = load_knowledge().toolkit(CudaVersion.parse("12.1"))
    assert floor is not None
    assert facts["lockguard:cuda"] == "12.1"
    assert facts["lockguard:driver-floor"] == str(floor.min_driver)
    assert {"sm_80", "sm_90"} <= set(facts["lockguard:gpu-architectures"].split())
    assert facts["lockguard:torch"] == lock["torch"].version
    assert facts["lockguard:torch-variant"] == "cu121"
    assert facts["lockguard:cudnn"] == lock["nvidia-cudnn-cu12"].version
    assert facts["lockguard:nccl"] == lock["nvidia-nccl-cu12"].version
    assert facts["lockguard:python"] == "3.11" and facts["lockguard:platforms"] == "linux-64"


def test_the_same_lock_gives_the_same_bytes_on_stdout_and_in_a_file(project, lg_process):
    first, second = export(lg_process, project), export(lg_process, project)
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert '"timestamp"' not in first.stdout
    assert export(lg_process, project, "--platform", "linux-64").stdout == first.stdout
    target = project / "sbom.cdx.json"
    target.write_text("an older SBOM\n")
    written = export(lg_process, project, "--output", str(target))
    assert written.exit_code == 0, written.stderr
    assert written.stdout == "" and "wrote" in written.stderr
    assert target.read_bytes() == first.stdout.encode()
    assert [p.name for p in project.iterdir() if p.name.endswith(".tmp")] == []
    # other lock bytes (re-sealed, so still lockguard's), another serial number
    edit(project / "requirements.lock", "# via torch", "# via  torch", reseal=True)
    other = export(lg_process, project)
    assert other.exit_code == 0, other.stderr
    assert json.loads(other.stdout)["serialNumber"] != json.loads(first.stdout)["serialNumber"]


def test_a_stale_lock_is_refused(project, lg_process):
    edit(project / "lockguard.toml", '"jinja2"]', '"jinja2", "fsspec"]')
    target = project / "sbom.json"
    result = export(lg_process, project, "--output", str(target))
    assert result.exit_code == 2
    assert "requirements.lock" in result.stderr and "LG101" in result.stderr
    assert "run `lockguard resolve` first" in result.stderr
    assert result.stdout == "" and not target.exists()


def test_a_missing_lock_is_refused(project, lg_process):
    (project / "requirements.lock").unlink()
    result = export(lg_process, project)
    assert result.exit_code == 2
    assert "requirements.lock is missing" in result.stderr and "LG100" in result.stderr
    assert "run `lockguard resolve` first" in result.stderr and result.stdout == ""


def test_a_hand_edited_lock_is_refused(project, lg_process):
    edit(project / "requirements.lock", "numpy==1.26.4", "numpy==1.26.3")
    result = export(lg_process, project)
    assert result.exit_code == 2 and "LG102" in result.stderr, result.stderr


def test_a_platform_the_lock_lacks_is_refused(project, lg_process):
    result = export(lg_process, project, "--platform", "osx-arm64")
    assert result.exit_code == 2 and "osx-arm64" in result.stderr


def test_the_bundled_gpu_training_example(tmp_path, lg_process):
    project = tmp_path / "gpu-training"
    shutil.copytree(EXAMPLE, project)
    result = export(lg_process, project)
    assert result.exit_code == 0, result.stderr
    bom = valid(result.stdout)
    facts = {k: v[0] for k, v in properties(bom["metadata"]["component"]).items()}
    assert facts["lockguard:cuda"] == "12.1"
    assert facts["lockguard:driver-floor"] == "525.60.13"
    assert facts["lockguard:torch"] == "2.1.2" and facts["lockguard:torch-variant"] == "cu121"
    assert facts["lockguard:cudnn"] == "8.9.2.26" and facts["lockguard:nccl"] == "2.18.1"
    assert {"sm_80", "sm_90"} <= set(facts["lockguard:gpu-architectures"].split())
    lock = requirements_lock.parse((project / "requirements.lock").read_text()).entries
    pip = [c for c in bom["components"] if c["purl"].startswith("pkg:pypi/")]
    assert sorted(c["name"] for c in pip) == sorted(lock)
    torch = next(c for c in pip if c["name"] == "torch")
    assert torch["externalReferences"][0]["url"].startswith("https://files.pythonhosted.org/")


def test_purls_as_the_purl_spec_writes_them():
    assert pypi_purl("torch", "2.1.2+cu121") == "pkg:pypi/torch@2.1.2%2Bcu121"
    assert pypi_purl("Foo_Bar", "1.0") == "pkg:pypi/foo-bar@1.0"
    url = "https://conda.anaconda.org/conda-forge/linux-64/cudnn-8.9.7.29-h092f7fd_3.conda"
    assert channel_of(url) == ("conda-forge", "linux-64")
    assert channel_of("https://example.org/mirror/nvidia/noarch/x-1-0.tar.bz2") == (
        "https://example.org/mirror/nvidia",
        "noarch",
    )
    package = CondaPackage(
        "cudnn", "8.9.7.29", "conda-forge", "linux-64", "h092f7fd_3", FileRef(url)
    )
    purl = conda_purl(package)
    assert purl == (
        "pkg:conda/cudnn@8.9.7.29?build=h092f7fd_3&channel=conda-forge&subdir=linux-64&type=conda"
    )
    assert PackageURL.from_string(purl).to_string() == purl


def test_several_platforms_each_with_its_packages_and_the_index_page(
    templates, tmp_path, lg_process
):
    project = copy_project(templates["two"], tmp_path / "two")
    bom = valid(export(lg_process, project).stdout)
    refs = [c["bom-ref"] for c in bom["components"]]
    assert len(refs) == len(set(refs))
    for platform in ("linux-64", "linux-aarch64"):
        lock = requirements_lock.parse((project / f"requirements.{platform}.lock").read_text())
        mine = [c for c in bom["components"] if properties(c)["lockguard:platform"] == [platform]]
        assert sorted(c["name"] for c in mine) == sorted(lock.entries)
        assert all(c["bom-ref"] == f"{platform}:{c['purl']}" for c in mine)
        jinja2 = next(c for c in mine if c["name"] == "jinja2")
        (page,) = jinja2["externalReferences"]  # no lock file records a URL: the index's page
        assert page["url"] == f"{lock.index_url}/jinja2/"
    facts = properties(bom["metadata"]["component"])
    assert facts["lockguard:platforms"] == ["linux-64 linux-aarch64"]
    assert "lockguard:conda-side" not in facts
    # no torch, no conda side: no CUDA fact is invented for either platform
    assert not any(k.startswith("lockguard:linux-") for k in facts)
    one = valid(export(lg_process, project, "--platform", "linux-aarch64").stdout)
    assert {properties(c)["lockguard:platform"][0] for c in one["components"]} == {"linux-aarch64"}
    assert one["serialNumber"] != bom["serialNumber"]
    lock_files = properties(one["metadata"]["component"])["lockguard:lock-file"]
    assert [f.split()[0] for f in lock_files] == ["requirements.linux-aarch64.lock"]


def test_facts_of_several_platforms_are_named_by_platform():
    def platform(name: str) -> PlatformPackages:
        pip = (PipPackage("torch", "2.1.2", ("a" * 64,), via=("",)),)
        return PlatformPackages(name, pip, facts=(("cuda", "12.1"),))

    def facts(*platforms: str) -> dict[str, list[str]]:
        bom = valid(render(Sbom("p", "0", tuple(platform(p) for p in platforms), ())))
        return properties(bom["metadata"]["component"])

    assert facts("linux-64")["lockguard:cuda"] == ["12.1"]
    both = facts("linux-64", "linux-aarch64")
    assert both["lockguard:linux-64:cuda"] == both["lockguard:linux-aarch64:cuda"] == ["12.1"]
    assert "lockguard:cuda" not in both


def test_pylock_gives_the_url_and_hash_of_every_locked_file(templates, tmp_path, lg_process):
    project = copy_project(templates["pylock"], tmp_path / "pylock")
    bom = valid(export(lg_process, project).stdout)
    lock = pylock.read((project / "pylock.toml").read_text())
    for component in bom["components"]:
        files = lock.packages[component["name"]].files
        assert files and {
            (r["url"], r["hashes"][0]["content"]) for r in component["externalReferences"]
        } == {(f.url, f.hashes["sha256"]) for f in files}
