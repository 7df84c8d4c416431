"""The doctor's checks: each gives ok / warn / error / skip with its evidence and, when it fails,
a Finding with the fix. Pure: probe facts, NVML facts, the lock and the knowledge come in.

LG300 driver too old for torch's CUDA          LG308 GPU memory held by processes that are gone
LG301 a GPU's arch is not in torch's build     LG309 torch sees no CUDA while NVML sees GPUs
LG302 a CUDA library mapped from outside torch's wheels (system NCCL, LD_LIBRARY_PATH)
LG303 /usr/local/cuda is another CUDA than torch's   LG310 installed versions differ from the lock
LG304 nvcc does not match torch.version.cuda   LG311 the probe crashed (torch import)
LG305 gcc newer than that nvcc accepts         LG312 no NVIDIA driver on this machine
LG306 -cu11 and -cu12 nvidia packages together LG313 the smoke matmul failed
LG307 /dev/shm smaller than 1 GiB              LG314 cuDNN in use differs from the installed wheel
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lockguard.install.inventory import LockView
from lockguard.knowledge.tables import Knowledge
from lockguard.model.finding import ERROR, INFO, WARNING, Finding
from lockguard.model.names import cuda_family, same_version
from lockguard.model.probe import ProbeResult
from lockguard.model.target import MachineFacts
from lockguard.model.versions import CudaVersion, GpuArch, build_runs_on

GIB = 1 << 30
SHM_MIN = GIB


@dataclass
class Check:
    id: str
    title: str
    status: str  # ok | warn | error | skip
    detail: str
    finding: Finding | None = None

    def to_dict(self) -> dict:
        out = {"id": self.id, "title": self.title, "status": self.status, "detail": self.detail}
        if self.finding:
            out["finding"] = self.finding.to_dict()
        return out


def _ok(id_: str, title: str, detail: str) -> Check:
    return Check(id_, title, "ok", detail)


def _skip(id_: str, title: str, detail: str) -> Check:
    return Check(id_, title, "skip", detail)


def _bad(id_: str, title: str, severity: str, message: str, hint: str) -> Check:
    return Check(id_, title, "error" if severity == ERROR else "warn" if severity == WARNING else "ok", message,
                 Finding(id_, severity, message, hint))


def decode_cudnn(value: int | None) -> str | None:
    """torch.backends.cudnn.version(): cuDNN 9 is M*10000+m*100+p (91002), cuDNN 8 is M*1000+m*100+p (8902)."""
    if not value:
        return None
    if value >= 10000:
        return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
    return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"


def run_checks(probe: ProbeResult, machine: MachineFacts, lock: LockView | None, knowledge: Knowledge,
               *, alive: dict[int, bool | None] | None = None) -> list[Check]:
    checks: list[Check] = []
    torch = probe.torch or {}
    crashed = probe.crashed or (torch.get("import_error") and "torch import raised")
    if crashed:
        checks.append(_bad("LG311", "probe", ERROR,
                           f"the probe in {probe.python} failed ({crashed}): {torch.get('import_error') or probe.stderr_tail or 'no output'}",
                           "run `python -c 'import torch'` in that environment; a crash on import usually means "
                           "stale .so files or a library shadowed by LD_LIBRARY_PATH (`lockguard check --env`)"))
    else:
        checks.append(_ok("LG311", "probe", f"python {probe.base.get('python', {}).get('version')} at {probe.python}"))
    torch_cuda = _cuda(torch.get("cuda"))
    checks.append(_driver(machine, torch_cuda, lock, knowledge))
    checks.append(_arch(machine, torch))
    checks.append(_mapped(torch))
    checks.append(_cuda_home_link(probe.base, torch_cuda))
    checks += _nvcc_gcc(probe.base, torch_cuda, knowledge)
    checks.append(_families(probe.base.get("distributions", {})))
    checks.append(_shm(probe.base.get("dev_shm_bytes")))
    checks.append(_zombies(machine, alive or {}))
    checks.append(_available(machine, torch))
    checks.append(_against_lock(probe.base.get("distributions", {}), lock))
    checks.append(_cudnn(torch, probe.base.get("distributions", {})))
    if probe.smoke is not None:
        checks.append(_smoke(probe.smoke))
    return checks


def _cuda(text: str | None) -> CudaVersion | None:
    try:
        return CudaVersion.parse(text).major_minor if text else None
    except ValueError:
        return None


def _driver(machine: MachineFacts, torch_cuda: CudaVersion | None, lock: LockView | None, knowledge: Knowledge) -> Check:
    title = "driver"
    if not machine.has_driver:
        return Check("LG312", title, "skip", machine.problem or "no NVIDIA driver",
                     Finding("LG312", INFO, f"no NVIDIA driver on this machine ({machine.problem})",
                             "GPU checks are skipped; set LOCKGUARD_CUDA_DRIVER / LOCKGUARD_GPU_ARCH to check a lock "
                             "against a target machine"))
    cuda = torch_cuda or (_cuda(lock.cuda) if lock and lock.cuda else None)
    if cuda is None:
        return _ok("LG300", title, f"driver {machine.driver}; no CUDA build to check against")
    toolkit = knowledge.toolkit(cuda)
    if toolkit and machine.driver < toolkit.min_driver:
        return _bad("LG300", title, ERROR,
                    f"driver {machine.driver} is older than CUDA {cuda} needs (>= {toolkit.min_driver}; {toolkit.origin})",
                    f"upgrade the NVIDIA driver to >= {toolkit.min_driver}, or lock a torch built for an older CUDA")
    if machine.cuda_max and machine.cuda_max.major < cuda.major:
        return _bad("LG300", title, ERROR, f"driver {machine.driver} runs CUDA up to {machine.cuda_max}, torch needs {cuda}",
                    "upgrade the NVIDIA driver")
    note = f" (minor-version compatibility: the driver's CUDA is {machine.cuda_max})" if machine.cuda_max and machine.cuda_max < cuda else ""
    return _ok("LG300", title, f"driver {machine.driver} runs CUDA {cuda}{note}")


def _arch(machine: MachineFacts, torch: dict) -> Check:
    title = "GPU architecture"
    archs = []
    for item in torch.get("arch_list") or []:
        try:
            archs.append(GpuArch.parse(item))
        except ValueError:
            continue
    if not machine.gpus or not archs:
        return _skip("LG301", title, "no GPU or no CUDA build of torch to compare")
    missing = [g for g in machine.gpus if not build_runs_on(tuple(archs), g.arch)]
    if missing:
        names = ", ".join(f"GPU {g.index} {g.name} ({g.arch})" for g in missing)
        return _bad("LG301", title, ERROR,
                    f"{names}: torch {torch.get('version')} was built for {' '.join(map(str, archs))}: expect "
                    "'CUDA error: no kernel image is available for execution on the device'",
                    "lock a torch build for this GPU (`lockguard constraints show torch X.Y` lists them)")
    return _ok("LG301", title, f"{', '.join(str(g.arch) for g in machine.gpus)} in torch's arch list")


def _mapped(torch: dict) -> Check:
    title = "loaded CUDA libraries"
    mapped = torch.get("mapped") or []
    if not mapped:
        return _skip("LG302", title, "torch not imported, or no CUDA libraries mapped")
    foreign = [p for p in mapped if re.search(r"/lib(nccl|cudart|cudnn)", p) and not _wheel_owned(p)]
    if foreign:
        return _bad("LG302", title, ERROR,
                    "loaded from outside torch's wheels: " + ", ".join(foreign),
                    "a system copy (ld.so.conf.d or LD_LIBRARY_PATH) shadows the wheel's; unset LD_LIBRARY_PATH or "
                    "remove that directory from it (NCCL shadowing shows as 'NCCL error: unhandled system error')")
    return _ok("LG302", title, f"{len(mapped)} libraries, all from the environment's wheels")


def _wheel_owned(path: str) -> bool:
    return "/site-packages/nvidia/" in path or "/site-packages/torch/" in path or "/site-packages/nvidia_" in path


def _cuda_home_link(base: dict, torch_cuda: CudaVersion | None) -> Check:
    title = "/usr/local/cuda"
    target = base.get("usr_local_cuda")
    if not target or torch_cuda is None:
        return _skip("LG303", title, "no /usr/local/cuda, or no CUDA torch")
    match = re.search(r"cuda-(\d+\.\d+)", target)
    if match and match.group(1) != str(torch_cuda):
        return _bad("LG303", title, WARNING, f"/usr/local/cuda -> {target} (CUDA {match.group(1)}); torch is CUDA {torch_cuda}",
                    f"point CUDA_HOME at a CUDA {torch_cuda} toolkit for extension builds")
    return _ok("LG303", title, f"-> {target}")


def _nvcc_gcc(base: dict, torch_cuda: CudaVersion | None, knowledge: Knowledge) -> list[Check]:
    tools = base.get("tools") or {}
    dists = base.get("distributions") or {}
    nvcc = _cuda(tools.get("nvcc"))
    out = []
    if nvcc is None or torch_cuda is None:
        out.append(_skip("LG304", "nvcc", "no nvcc or no CUDA torch"))
    else:
        rule = next((knowledge.nvcc_rule(n) for n in dists if knowledge.nvcc_rule(n)), None)
        if rule and not rule.accepts(nvcc, torch_cuda):
            out.append(_bad("LG304", "nvcc", ERROR,
                            f"nvcc {nvcc} ({tools.get('nvcc_path')}) vs torch.version.cuda {torch_cuda}: {rule.package}'s "
                            f"JIT ops refuse this pair ({rule.origin})",
                            f"use a CUDA {torch_cuda} toolkit (CUDA_HOME), or {rule.override_env}=1 at your own risk"))
        elif nvcc.major != torch_cuda.major:
            out.append(_bad("LG304", "nvcc", ERROR, f"nvcc {nvcc} vs torch.version.cuda {torch_cuda}: torch's cpp_extension "
                            "refuses a different CUDA major", f"use a CUDA {torch_cuda} toolkit (CUDA_HOME)"))
        elif nvcc != torch_cuda:
            out.append(_bad("LG304", "nvcc", WARNING, f"nvcc {nvcc} vs torch.version.cuda {torch_cuda}: minor mismatch",
                            f"extensions usually work; a CUDA {torch_cuda} toolkit avoids surprises"))
        else:
            out.append(_ok("LG304", "nvcc", f"nvcc {nvcc} matches torch.version.cuda"))
    gcc = tools.get("gcc")
    toolkit = knowledge.toolkit(nvcc) if nvcc else None
    if not gcc or toolkit is None:
        out.append(_skip("LG305", "host gcc", "no gcc or no nvcc"))
    else:
        major = int(gcc.split(".")[0]) if gcc.split(".")[0].isdigit() else 0
        if major > toolkit.max_gcc:
            out.append(_bad("LG305", "host gcc", ERROR, f"gcc {gcc} is newer than nvcc {nvcc} accepts (<= {toolkit.max_gcc}; "
                            f"{toolkit.origin})", f"install gcc {toolkit.max_gcc} and point CC/CXX at it (conda: gxx_linux-64={toolkit.max_gcc})"))
        else:
            out.append(_ok("LG305", "host gcc", f"gcc {gcc} <= {toolkit.max_gcc}"))
    return out


def _families(dists: dict) -> Check:
    families: dict[str, list[str]] = {}
    for name in dists:
        family = cuda_family(name)
        if family:
            families.setdefault(family, []).append(name)
    if len(families) > 1:
        listed = "; ".join(f"cu{k}: {', '.join(sorted(v))}" for k, v in sorted(families.items()))
        return _bad("LG306", "nvidia wheels", ERROR, f"several CUDA majors installed ({listed})",
                    "they overwrite each other in nvidia/; `lockguard clean-install` keeps only the locked ones")
    return _ok("LG306", "nvidia wheels", f"one CUDA family ({', '.join('cu' + k for k in families) or 'none'})")


def _shm(size: int | None) -> Check:
    if size is None:
        return _skip("LG307", "/dev/shm", "no /dev/shm")
    if size < SHM_MIN:
        return _bad("LG307", "/dev/shm", WARNING, f"/dev/shm is {size / (1 << 20):.0f} MiB",
                    "DataLoader workers and NCCL need more: run containers with --shm-size=8g (or --ipc=host)")
    return _ok("LG307", "/dev/shm", f"{size / GIB:.1f} GiB")


def _zombies(machine: MachineFacts, alive: dict[int, bool | None]) -> Check:
    gone = [(g, p) for g in machine.gpus for p in g.processes if alive.get(p.pid) is False]
    if gone:
        listed = ", ".join(f"pid {p.pid} on GPU {g.index} ({p.used_memory / GIB:.1f} GiB)" for g, p in gone)
        return _bad("LG308", "GPU memory", WARNING, f"memory held by processes that no longer exist: {listed}",
                    "a crashed job's context; it frees when its parent exits (or `nvidia-smi --gpu-reset` on an idle GPU)")
    if not machine.gpus:
        return _skip("LG308", "GPU memory", "no GPUs")
    return _ok("LG308", "GPU memory", "no memory held by dead processes")


def _available(machine: MachineFacts, torch: dict) -> Check:
    if not machine.gpus or not torch or torch.get("missing"):
        return _skip("LG309", "torch.cuda", "no GPU or no torch")
    if not torch.get("cuda"):
        return _bad("LG309", "torch.cuda", ERROR, f"torch {torch.get('version')} is a CPU build on a machine with "
                    f"{len(machine.gpus)} GPU(s)", "install the lock's CUDA build of torch")
    if not torch.get("cuda_available"):
        return _bad("LG309", "torch.cuda", ERROR,
                    f"torch.cuda.is_available() is False while NVML sees {len(machine.gpus)} GPU(s)"
                    + (f": {torch['cuda_error']}" if torch.get("cuda_error") else ""),
                    "check CUDA_VISIBLE_DEVICES, the driver version (LG300) and the container's GPU access")
    return _ok("LG309", "torch.cuda", f"{torch.get('device_count')} device(s) visible")


def _against_lock(dists: dict, lock: LockView | None) -> Check:
    if lock is None:
        return _skip("LG310", "lock", "no lock to compare (run in the project, or pass --intent)")
    wrong = []
    for name, version in sorted(lock.pip.items()):
        have = dists.get(name)
        if have is None:
            wrong.append(f"{name} missing (lock {version})")
            continue
        if not same_version(have, version):
            wrong.append(f"{name} {have} (lock {version})")
    if wrong:
        shown = "; ".join(wrong[:8]) + (f"; and {len(wrong) - 8} more" if len(wrong) > 8 else "")
        return _bad("LG310", "lock", ERROR, f"{len(wrong)} packages differ from the lock: {shown}",
                    "`lockguard clean-install` makes the environment the lock")
    return _ok("LG310", "lock", f"{len(lock.pip)} packages match the lock")


def _cudnn(torch: dict, dists: dict) -> Check:
    used = decode_cudnn(torch.get("cudnn"))
    wheel = next((v for n, v in dists.items() if n.startswith("nvidia-cudnn-")), None)
    if not used or not wheel:
        return _skip("LG314", "cuDNN", f"in use: {used or 'none'}")
    if wheel.split(".")[:3] != used.split("."):
        return _bad("LG314", "cuDNN", WARNING, f"torch uses cuDNN {used}, the installed wheel is {wheel}",
                    "another libcudnn is loaded first (LD_LIBRARY_PATH or a system copy)")
    return _ok("LG314", "cuDNN", f"{used} from the nvidia-cudnn wheel")


def _smoke(results: list) -> Check:
    failed = [r for r in results if not r.get("ok")]
    if failed:
        return _bad("LG313", "smoke matmul", ERROR,
                    "; ".join(f"GPU {r['index']}: {r.get('error')}" for r in failed), "see the error; LG300/LG301 explain the usual causes")
    if not results:
        return _skip("LG313", "smoke matmul", "no visible GPU")
    return _ok("LG313", "smoke matmul", ", ".join(f"GPU {r['index']} {r['seconds'] * 1000:.1f} ms" for r in results))
