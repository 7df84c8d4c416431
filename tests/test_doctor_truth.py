"""doctor tells the truth (issue 11): an installed torch that fails to import is an error naming the
library and the locked distribution that provides it; system CUDA facts (/usr/local/cuda,
CUDA_HOME, nvcc, libraries the loader reaches) are reported without torch and judged against the
lock; every skip gives one reason. Real venvs, real gcc-compiled libraries, the real probe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lockguard.doctor.check import Facts
from lockguard.doctor.checks import run_checks
from lockguard.install.inventory import LockView
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.machine.system_cuda import gather_system
from lockguard.model.probe import ProbeResult
from lockguard.model.system_facts import (
    Compiler,
    Nvcc,
    SharedLibrary,
    SystemFacts,
    Toolkit,
    decode_library_version,
)
from lockguard.model.target import GpuInfo, MachineFacts
from lockguard.model.versions import CudaVersion, DriverVersion, GpuArch
from tests.support.envs import copy_venv, make_venv, site_packages
from tests.support.fake_torch import add_dist, add_package, install_fake_torch
from tests.support.native_libs import fake_cudnn, fake_nccl, fake_nvcc

K = load_knowledge()
REPO = Path(__file__).resolve().parents[1]
CUDNN_ERROR = "libcudnn.so.8: cannot open shared object file: No such file or directory"
TORCH = {
    "version": "2.1.2",
    "cuda": "12.1",
    "cudnn": 8902,
    "cuda_available": False,
    "arch_list": ["sm_80", "sm_90"],
    "devices": [],
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("truth-venvs") / "template")


@pytest.fixture
def venv(template, tmp_path) -> Path:
    return copy_venv(template, tmp_path / "env")


@pytest.fixture
def project(tmp_path) -> Path:
    """The example project's lock: torch 2.1.2, nvidia-cudnn-cu12 8.9.2.26, nvidia-nccl-cu12 2.18.1,
    CUDA 12.1."""
    return Path(shutil.copytree(REPO / "examples" / "gpu-training", tmp_path / "project"))


@pytest.fixture
def quiet_machine(monkeypatch, tmp_path):
    """No CUDA_HOME / CUDA_PATH / LD_LIBRARY_PATH from the developer's shell."""
    for key in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "LOCKGUARD_NODE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def doctor_json(lg, *args) -> tuple[int, dict]:
    result = lg("doctor", *args, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)["data"]


def check(body: dict, code: str, title: str | None = None) -> dict:
    return next(
        c for c in body["checks"] if c["code"] == code and (title is None or c["title"] == title)
    )


# -- 1. installed but broken is an error -----------------------------------------------------------


def test_no_torch_distribution_is_a_skip_with_that_reason(venv, lg, quiet_machine):
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    assert code == 0
    torch = check(body, "LG311", "import torch")
    assert (
        torch["status"] == "skip"
        and torch["message"] == "no torch distribution in this environment"
    )
    assert body["drift"]["torch_state"] == "missing"


def test_installed_torch_whose_import_fails_is_an_error_naming_the_library(venv, lg, quiet_machine):
    install_fake_torch(site_packages(venv), {**TORCH, "crash": "import_error"})
    result = lg("doctor", "--python", str(venv / "bin" / "python"))
    assert result.exit_code == 1, result.stdout
    assert "error  import torch" in result.stdout and "ImportError: " + CUDNN_ERROR in result.stdout
    assert "0 errors" not in result.stdout
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    torch = check(body, "LG311", "import torch")
    assert code == 1 and torch["status"] == "error" and torch["severity"] == "error"
    assert "torch 2.1.2 is installed but `import torch` fails" in torch["message"]
    assert any("libcudnn.so.8" in line for line in torch["evidence"])  # the traceback's tail
    assert body["drift"]["torch_state"] == "broken" and body["drift"]["torch"] == "2.1.2"


def test_the_fix_names_the_locked_distribution_whose_record_lists_the_library(
    venv, lg, quiet_machine, project
):
    site = site_packages(venv)
    install_fake_torch(site, {**TORCH, "crash": "import_error"})
    add_dist(
        site,
        "nvidia-cudnn-cu12",
        "8.9.2.26",
        ("nvidia/cudnn/lib/libcudnn.so.8", "nvidia/cudnn/lib/libcudnn_ops_infer.so.8"),
    )
    code, body = doctor_json(
        lg, "--python", str(venv / "bin" / "python"), "--intent", str(project / "lockguard.toml")
    )
    hint = check(body, "LG311", "import torch")["hint"]
    assert code == 1
    assert "libcudnn.so.8 belongs to nvidia-cudnn-cu12 8.9.2.26 (locked)" in hint
    assert "nvidia/cudnn/lib/libcudnn.so.8" in hint and "file is missing" in hint
    assert "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==8.9.2.26" in hint
    # no RECORD lists it (the wheel is not installed at all): the lock's wheel of that library is
    # named
    shutil.rmtree(site / "nvidia_cudnn_cu12-8.9.2.26.dist-info")
    code, body = doctor_json(
        lg, "--python", str(venv / "bin" / "python"), "--intent", str(project / "lockguard.toml")
    )
    assert (
        "comes from the lock's nvidia-cudnn-cu12 8.9.2.26, which is not installed"
        in check(body, "LG311", "import torch")["hint"]
    )


def test_a_dist_info_without_its_package_is_broken_not_missing(venv, lg, quiet_machine):
    site = site_packages(venv)
    install_fake_torch(site, dict(TORCH))
    shutil.rmtree(site / "torch")
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    torch = check(body, "LG311", "import torch")
    assert (
        code == 1 and torch["status"] == "error" and "No module named 'torch'" in torch["message"]
    )


def test_other_gpu_packages_that_fail_to_import_are_errors_too(venv, lg, quiet_machine):
    site = site_packages(venv)
    install_fake_torch(site, dict(TORCH))
    add_package(
        site,
        "torchvision",
        "0.16.2",
        "torchvision",
        (
            "raise ImportError('libc10_cuda.so: cannot open shared object file: "
            "No such file or directory')\n"
        ),
    )
    add_package(site, "flash-attn", "2.5.6", "flash_attn", "VERSION = '2.5.6'\n")
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    vision = check(body, "LG311", "import torchvision")
    assert code == 1 and vision["status"] == "error" and "libc10_cuda.so" in vision["message"]
    assert check(body, "LG311", "import flash_attn")["status"] == "ok"
    assert check(body, "LG311", "import torch")["status"] == "ok"
    # with torch broken, the packages that need it are not tried: a skip with that reason
    install_fake_torch(site, {**TORCH, "crash": "import_error"})
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    assert check(body, "LG311", "import torchvision")["status"] == "skip"


# -- 2. facts first, without torch -----------------------------------------------------------------


def test_a_cuda_home_folder_with_version_json_is_reported_with_its_version(
    venv, lg, quiet_machine, tmp_path, monkeypatch
):
    home = tmp_path / "cuda-12.1"
    (home / "bin").mkdir(parents=True)
    (home / "version.json").write_text(
        json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.1.1"}})
    )
    monkeypatch.setenv("CUDA_HOME", str(home))
    facts = gather_system()
    named = facts.toolkit("CUDA_HOME")
    assert (
        named.version == "12.1.1"
        and named.version_source == "version.json"
        and named.target == str(home)
    )
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    reported = next(t for t in body["facts"]["system"]["toolkits"] if t["via"] == "CUDA_HOME")
    assert reported["version"] == "12.1.1" and body["drift"]["cuda_home"] == str(home)
    text = lg("doctor", "--python", str(venv / "bin" / "python")).stdout
    assert f"CUDA_HOME        {home}: CUDA 12.1.1 (version.json)" in text


def test_version_txt_and_nvcc_are_the_other_sources(tmp_path):
    old = tmp_path / "cuda-10.2"
    old.mkdir()
    (old / "version.txt").write_text("CUDA Version 10.2.89\n")
    bare = tmp_path / "cuda-12.4"
    fake_nvcc(bare / "bin", "12.4", "12.4.131")
    path_bin = tmp_path / "path-bin"
    fake_nvcc(path_bin, "11.8", "11.8.89")
    env = {"CUDA_HOME": str(old), "CUDA_PATH": str(bare), "PATH": f"{path_bin}:/usr/bin:/bin"}
    facts = gather_system(
        env, usr_local_cuda=tmp_path / "no-such-link", ld_conf_dir=tmp_path, ldconfig=None
    )
    assert (facts.toolkit("CUDA_HOME").version, facts.toolkit("CUDA_HOME").version_source) == (
        "10.2.89",
        "version.txt",
    )
    assert (facts.toolkit("CUDA_PATH").version, facts.toolkit("CUDA_PATH").version_source) == (
        "12.4.131",
        "nvcc --version",
    )
    assert facts.toolkit("/usr/local/cuda") is None
    assert [(n.path, n.version, n.release) for n in facts.nvcc] == [
        (str(path_bin / "nvcc"), "11.8.89", "11.8")
    ]


def test_usr_local_cuda_link_is_reported_with_its_target(tmp_path):
    real = tmp_path / "cuda-13.0"
    fake_nvcc(real / "bin", "13.0", "13.0.88")
    link = tmp_path / "cuda"
    link.symlink_to(real)
    facts = gather_system(
        {"PATH": "/usr/bin:/bin"}, usr_local_cuda=link, ld_conf_dir=tmp_path, ldconfig=None
    )
    local = facts.toolkit("/usr/local/cuda")
    assert (
        local.target == str(real)
        and local.version == "13.0.88"
        and local.version_source == "nvcc --version"
    )


def test_this_machines_usr_local_cuda_and_nvcc_are_reported(venv, lg, quiet_machine):
    """On a machine with /usr/local/cuda (this one has CUDA 13.0 with nvcc) doctor says so."""
    if not Path("/usr/local/cuda").exists():
        pytest.skip("no /usr/local/cuda on this machine")
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    local = next(t for t in body["facts"]["system"]["toolkits"] if t["via"] == "/usr/local/cuda")
    assert local["target"] and body["drift"]["usr_local_cuda"] == local["target"]
    if shutil.which("nvcc"):
        assert body["facts"]["system"]["nvcc"][0]["version"] and body["drift"]["nvcc"]


def test_a_libnccl_on_ld_library_path_is_reported_and_judged_against_the_lock(
    venv, lg, quiet_machine, tmp_path, monkeypatch, project
):
    lib = fake_nccl(tmp_path / "system-nccl", 21903)
    if lib is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib.parent))
    facts = gather_system()
    nccl = facts.first_reachable("libnccl.so.2")
    assert (nccl.path, nccl.soname, nccl.version, nccl.version_source, nccl.via) == (
        str(lib),
        "libnccl.so.2",
        "2.19.3",
        "ncclGetVersion",
        "LD_LIBRARY_PATH",
    )
    # no lock: the fact is reported, nothing to judge it by
    code, body = doctor_json(lg, "--python", str(venv / "bin" / "python"))
    assert (
        code == 0 and body["drift"]["nccl"] == "2.19.3" and body["drift"]["nccl_how"] == "reachable"
    )
    text = lg("doctor", "--python", str(venv / "bin" / "python")).stdout
    assert (
        f"libnccl          {lib}: 2.19.3 (ncclGetVersion), SONAME libnccl.so.2, via LD_LIBRARY_PATH"
        in text
    )
    # the lock pins nvidia-nccl-cu12 2.18.1: a warning before torch is installed
    code, body = doctor_json(
        lg, "--python", str(venv / "bin" / "python"), "--intent", str(project / "lockguard.toml")
    )
    lg302 = check(body, "LG302")
    assert lg302["status"] == "warn" and lg302["severity"] == "warning"
    assert (
        f"{lib} (NCCL 2.19.3, via LD_LIBRARY_PATH) is the libnccl.so.2 a process finds by name"
        in lg302["message"]
    )
    assert "the lock's nvidia-nccl-cu12 is 2.18.1" in lg302["message"]
    assert f"remove {lib.parent} from LD_LIBRARY_PATH" in lg302["hint"]
    # the same version as the lock: no warning
    fake_nccl(lib.parent, 21801)
    code, body = doctor_json(
        lg, "--python", str(venv / "bin" / "python"), "--intent", str(project / "lockguard.toml")
    )
    assert check(body, "LG302")["status"] == "ok"


def test_a_library_version_from_its_file_name_and_the_loader_conf(tmp_path):
    folder = tmp_path / "opt-nccl"
    lib = fake_nccl(folder, 0, filename="libnccl.so.2.17.1")  # ncclGetVersion says 0: unreadable
    if lib is None:
        pytest.skip("no C compiler")
    (folder / "libnccl.so.2").symlink_to("libnccl.so.2.17.1")
    cudnn = fake_cudnn(tmp_path / "cudnn", 8600)
    conf = tmp_path / "ld.so.conf.d"
    conf.mkdir()
    (conf / "nccl.conf").write_text(f"# NCCL\n{folder}\n")
    facts = gather_system(
        {"LD_LIBRARY_PATH": str(cudnn.parent), "PATH": "/usr/bin:/bin"},
        usr_local_cuda=tmp_path / "none",
        ld_conf_dir=conf,
        ldconfig=None,
    )
    nccl = facts.first_reachable("libnccl.so.2")
    assert (
        nccl.version == "2.17.1"
        and nccl.version_source == "file name"
        and nccl.via == str(conf / "nccl.conf")
    )
    assert nccl.names == ("libnccl.so.2", "libnccl.so.2.17.1") and nccl.path == str(
        folder / "libnccl.so.2"
    )
    found = facts.first_reachable("libcudnn.so.8")
    assert found.version == "8.6.0" and found.version_source == "cudnnGetVersion"
    assert [lib.family for lib in facts.libraries] == [
        "cudnn",
        "nccl",
    ]  # LD_LIBRARY_PATH comes first


def test_a_reachable_nccl_is_an_error_only_when_torch_mapped_it_else_a_warning():
    lib = SharedLibrary(
        "nccl",
        "/opt/nccl/libnccl.so.2",
        ("libnccl.so.2",),
        "/opt/nccl/libnccl.so.2",
        "LD_LIBRARY_PATH",
        "libnccl.so.2",
        "2.19.3",
        "ncclGetVersion",
    )
    lock = LockView(pip={"nvidia-nccl-cu12": "2.18.1", "torch": "2.1.2"}, cuda="12.1")
    sys_facts = SystemFacts(libraries=(lib,))

    def lg302(torch):
        result = ProbeResult(
            "/env/bin/python", {"python": {"version": "3.11.7"}, "distributions": {}}, torch
        )
        return next(
            c
            for c in run_checks(Facts(result, MachineFacts(), sys_facts, lock, K))
            if c.id == "LG302"
        )

    assert lg302({"state": "missing"}).status == "warn"
    assert lg302({"state": "broken", "installed": "2.1.2"}).status == "warn"
    mapped = lg302(
        {
            "state": "ok",
            **TORCH,
            "mapped": ["/opt/nccl/libnccl.so.2"],
            "mapped_versions": {"/opt/nccl/libnccl.so.2": 21903},
        }
    )
    assert mapped.status == "error" and "NCCL 2.19.3" in mapped.detail
    wheel = "/env/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
    # torch loaded its wheel's copy, but the foreign one is what a process opening libnccl.so.2
    # by name gets: the registry's warning, as check --env and clean-install say (LG217)
    used_wheel = lg302({"state": "ok", **TORCH, "mapped": [wheel]})
    assert used_wheel.status == "warn" and used_wheel.finding.severity == "warning"
    assert "torch loaded its wheels' 1 library here" in used_wheel.detail


def test_library_version_codes_decode():
    assert (
        decode_library_version("nccl", 21805) == "2.18.5"
        and decode_library_version("nccl", 2708) == "2.7.8"
    )
    assert (
        decode_library_version("cudart", 12010) == "12.1"
        and decode_library_version("cudnn", 90100) == "9.1.0"
    )
    assert (
        decode_library_version("cublasLt", 120103) == "12.1.3"
        and decode_library_version("cublas", [12, 1, 3]) == "12.1.3"
    )
    assert decode_library_version("nccl", 0) is None and decode_library_version("nccl", "x") is None


def test_the_probe_and_the_model_agree_on_the_version_calls():
    import importlib.util

    from lockguard.model.system_facts import VERSION_CALLS

    spec = importlib.util.spec_from_file_location(
        "probe", REPO / "lockguard" / "doctor" / "probe.py"
    )
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    assert probe.VERSION_CALLS == VERSION_CALLS


# -- 3. one reason per skip ------------------------------------------------------------------------

NO_DRIVER = MachineFacts(problem="no NVIDIA driver (NVML Shared Library Not Found)")


def _facts(
    torch, machine=NO_DRIVER, system=None, lock=None, dists=None, smoke=None, **base
) -> Facts:
    probe = ProbeResult(
        "/env/bin/python",
        {"python": {"version": "3.11.7"}, "distributions": dists or {}, **base},
        torch,
    )
    probe.smoke = smoke
    return Facts(probe, machine, system or SystemFacts(), lock, K, smoke_requested=True)


def test_every_skip_path_gives_one_reason():
    gpu = MachineFacts(
        DriverVersion.parse("535.104.05"),
        CudaVersion.parse("12.2"),
        (GpuInfo(0, "NVIDIA A100", GpuArch.parse("sm_80")),),
    )
    nvcc = (Nvcc("/usr/bin/nvcc", "/usr/bin/nvcc", None, None, "no release line"),)
    worlds = {
        "nothing": _facts({"state": "missing"}),
        "torch broken": _facts({"state": "broken", "installed": "2.1.2"}, gpu),
        "probe failed": _facts(None, gpu),
        "cpu torch": _facts(
            {"state": "ok", "version": "2.1.2+cpu", "cuda": None},
            gpu,
            SystemFacts(
                gcc=Compiler("/usr/bin/g++", "12.2.0"),
                toolkits=(
                    Toolkit(
                        "/usr/local/cuda",
                        "/usr/local/cuda",
                        "/usr/local/cuda-12.1",
                        None,
                        None,
                        None,
                    ),
                ),
            ),
        ),
        "no archs, no cudnn": _facts(
            {"state": "ok", **TORCH, "arch_list": [], "cudnn": None},
            gpu,
            SystemFacts(nvcc=nvcc, gcc=Compiler("/usr/bin/g++", None)),
            smoke=[],
        ),
        "no cudnn wheel": _facts(
            {"state": "ok", **TORCH},
            gpu,
            SystemFacts(
                libraries=(
                    SharedLibrary(
                        "nccl",
                        "/x/libnccl.so.2",
                        ("libnccl.so.2",),
                        "/x/libnccl.so.2",
                        "ldconfig cache",
                    ),
                )
            ),
        ),
        "unknown nvcc": _facts(
            {"state": "ok", **TORCH},
            gpu,
            SystemFacts(
                nvcc=(Nvcc("/usr/bin/nvcc", "/usr/bin/nvcc", "99.1.0", "99.1"),),
                gcc=Compiler("/usr/bin/g++", "12.2.0"),
            ),
        ),
        "lock without cuda": _facts(
            {"state": "missing"},
            lock=LockView(pip={}),
            system=SystemFacts(
                toolkits=(
                    Toolkit(
                        "/usr/local/cuda",
                        "/usr/local/cuda",
                        "/usr/local/cuda-12.1",
                        "12.1.1",
                        "version.json",
                    ),
                )
            ),
        ),
    }
    skipped: dict[str, set[str]] = {}
    for world, facts in worlds.items():
        for item in run_checks(facts):
            if item.status != "skip":
                continue
            skipped.setdefault(item.id, set()).add(item.detail)
            assert item.detail.strip(), f"{world}: {item.id} skips without a reason"
            for joint in (" or ", " and/or ", "/or"):
                assert joint not in item.detail, (
                    f"{world}: {item.id} {item.title}: two reasons: {item.detail!r}"
                )
    # every check that can skip was walked to its skip
    assert set(skipped) >= {
        "LG301",
        "LG302",
        "LG303",
        "LG304",
        "LG305",
        "LG307",
        "LG308",
        "LG309",
        "LG310",
        "LG311",
        "LG312",
        "LG313",
        "LG314",
    }, sorted(skipped)
    # and each says which one applies
    assert "torch is a CPU build" in skipped["LG301"] and "no GPU visible" in skipped["LG301"]
    assert (
        "torch is not installed" in skipped["LG304"]
        and "no nvcc on this machine" in skipped["LG304"]
    )
    assert (
        "no C++ compiler on PATH" in skipped["LG305"]
        and "nvcc 99.1 is not in lockguard's CUDA table" in skipped["LG305"]
    )
    assert "no /dev/shm on this machine" in skipped["LG307"]
    assert "no torch distribution in this environment" in skipped["LG311"]


def test_the_helpers_soname_reader_agrees_with_pyelftools(tmp_path):
    import importlib.util

    from lockguard.io.env.elf import soname
    from tests.support.native_libs import compile_c_library

    spec = importlib.util.spec_from_file_location(
        "library_probe", REPO / "lockguard" / "io" / "machine" / "library_probe.py"
    )
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    nccl = fake_nccl(tmp_path / "a", 21903)
    if nccl is None:
        pytest.skip("no C compiler")
    plain = compile_c_library(tmp_path / "b", "libplain.so", "", "int f(void) { return 1; }\n")
    text = tmp_path / "libtext.so.1"
    text.write_text("not an ELF file")
    assert helper.elf_soname(str(nccl)) == soname(nccl) == "libnccl.so.2"
    assert helper.elf_soname(str(text)) is None and soname(text) is None
    # -Wl,-soname, with an empty name: no DT_SONAME at all, or an empty one; both read as None
    assert helper.elf_soname(str(plain)) in (None, soname(plain) or None)
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    if libc.exists():
        assert helper.elf_soname(str(libc)) == soname(libc) == "libc.so.6"
