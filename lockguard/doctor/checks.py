"""The doctor's checks: each gives ok / warn / error / skip with its evidence and, when it fails,
a Finding with the fix; a skip names the one reason that applies. Pure: the probe's report, NVML,
the system CUDA facts, the lock and the knowledge come in (doctor/check.py: Facts).

LG300 driver too old for torch's CUDA          LG308 GPU memory held by processes that are gone
LG301 a GPU's arch is not in torch's build     LG309 torch sees no CUDA while NVML sees GPUs
LG302 a CUDA library loaded (error) or reachable (warning) from outside the wheels: system NCCL
LG303 the toolkit JIT builds use (/usr/local/cuda, CUDA_HOME) is another CUDA than the lock's
LG304 nvcc does not match torch.version.cuda   LG310 installed versions differ from the lock
LG305 gcc newer than that nvcc accepts         LG311 the probe failed, or an installed GPU package
                                                     fails to import
LG206 one distribution installed twice in one folder (two .dist-info; as check --env says)
LG306 -cu11 and -cu12 nvidia packages together LG312 no NVIDIA driver on this machine
LG307 /dev/shm smaller than 1 GiB              LG313 the smoke matmul failed
                                               LG314 cuDNN in use differs from the installed wheel
"""

from __future__ import annotations

import os

from lockguard.doctor.check import Check, Facts, cuda_of, flag, ok, skip
from lockguard.doctor.checks_system import system_checks
from lockguard.doctor.imports import import_checks
from lockguard.model import codes
from lockguard.model.json_types import JsonObject
from lockguard.model.names import cuda_family, same_version
from lockguard.model.versions import GpuArch, build_runs_on
from lockguard.model.wording import counted

GIB = 1 << 30


def decode_cudnn(value: int | None) -> str | None:
    """torch.backends.cudnn.version(): cuDNN 9 is M*10000+m*100+p (91002), cuDNN 8 is
    M*1000+m*100+p (8902)."""
    if not value or not isinstance(value, int):
        return None
    if value >= 10000:
        return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
    return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"


def run_checks(facts: Facts) -> list[Check]:
    checks = import_checks(facts)
    checks.append(_driver(facts))
    checks.append(_arch(facts))
    checks += system_checks(facts)
    checks.append(_families(facts.dists, facts.clean_install))
    checks.append(_twice(facts))
    checks.append(_zombies(facts))
    checks.append(_available(facts))
    checks.append(_against_lock(facts))
    checks.append(_cudnn(facts))
    if facts.smoke_requested:
        checks.append(_smoke(facts))
    return checks


def _driver(facts: Facts) -> Check:
    title = "driver"
    machine = facts.machine
    if not machine.has_driver:
        problem = machine.problem or "no NVIDIA driver"
        return Check(
            codes.NO_DRIVER.code,
            title,
            "skip",
            problem,
            codes.NO_DRIVER.finding(
                f"no NVIDIA driver on this machine ({problem})",
                "GPU checks are skipped; set LOCKGUARD_CUDA_DRIVER / LOCKGUARD_GPU_ARCH to check "
                "a lock against a target machine",
            ),
        )
    cuda = facts.torch_cuda or (cuda_of(facts.lock.cuda) if facts.lock else None)
    if cuda is None:
        return ok(
            codes.DRIVER_TOO_OLD.code,
            title,
            f"driver {machine.driver}; no CUDA build to check against",
        )
    toolkit = facts.knowledge.toolkit(cuda)
    if toolkit and machine.driver < toolkit.min_driver:
        return flag(
            codes.DRIVER_TOO_OLD,
            title,
            f"driver {machine.driver} is older than CUDA {cuda} needs "
            f"(>= {toolkit.min_driver}; {toolkit.origin})",
            f"upgrade the NVIDIA driver to >= {toolkit.min_driver}, "
            "or lock a torch built for an older CUDA",
        )
    if machine.cuda_max and machine.cuda_max.major < cuda.major:
        return flag(
            codes.DRIVER_TOO_OLD,
            title,
            f"driver {machine.driver} runs CUDA up to {machine.cuda_max}, torch needs {cuda}",
            "upgrade the NVIDIA driver",
        )
    note = (
        f" (minor-version compatibility: the driver's CUDA is {machine.cuda_max})"
        if machine.cuda_max and machine.cuda_max < cuda
        else ""
    )
    return ok(codes.DRIVER_TOO_OLD.code, title, f"driver {machine.driver} runs CUDA {cuda}{note}")


def _arch(facts: Facts) -> Check:
    title = "GPU architecture"
    if not facts.machine.gpus:
        return skip(codes.ARCH_NOT_IN_BUILD.code, title, "no GPU visible")
    reason = facts.torch_unusable()
    if reason:
        return skip(codes.ARCH_NOT_IN_BUILD.code, title, reason)
    torch = facts.torch
    if not torch.get("cuda"):
        return skip(codes.ARCH_NOT_IN_BUILD.code, title, "torch is a CPU build")
    archs = []
    for item in torch.get("arch_list") or []:
        try:
            archs.append(GpuArch.parse(item))
        except ValueError:
            continue
    if not archs:
        return skip(codes.ARCH_NOT_IN_BUILD.code, title, "torch reports no CUDA architectures")
    missing = [g for g in facts.machine.gpus if not build_runs_on(tuple(archs), g.arch)]
    if missing:
        names = ", ".join(f"GPU {g.index} {g.name} ({g.arch})" for g in missing)
        return flag(
            codes.ARCH_NOT_IN_BUILD,
            title,
            f"{names}: torch {torch.get('version')} was built for "
            f"{' '.join(map(str, archs))}: expect "
            "'CUDA error: no kernel image is available for execution on the device'",
            "lock a torch build for this GPU (`lockguard constraints show torch X.Y` lists them)",
        )
    return ok(
        codes.ARCH_NOT_IN_BUILD.code,
        title,
        f"{', '.join(str(g.arch) for g in facts.machine.gpus)} in torch's arch list",
    )


def _families(dists: JsonObject, clean_install: str) -> Check:
    families: dict[str, list[str]] = {}
    for name in dists:
        family = cuda_family(name)
        if family:
            families.setdefault(family, []).append(name)
    if len(families) > 1:
        listed = "; ".join(f"cu{k}: {', '.join(sorted(v))}" for k, v in sorted(families.items()))
        return flag(
            codes.MIXED_NVIDIA_FAMILIES,
            "nvidia wheels",
            f"several CUDA majors installed ({listed})",
            f"they overwrite each other in nvidia/; {clean_install} keeps only the locked ones",
        )
    return ok(
        codes.MIXED_NVIDIA_FAMILIES.code,
        "nvidia wheels",
        f"one CUDA family ({', '.join('cu' + k for k in families) or 'none'})",
    )


def _twice(facts: Facts) -> Check:
    """LG206, as `check --env` and clean-install report it: two dist-infos of one name in one
    folder; the probe names the one whose files are on disk (what imports)."""
    title = "installed twice"
    twice = {name: copies for name, copies in facts.duplicates.items() if len(copies) > 1}
    if not twice:
        return ok(
            codes.TWO_DIST_INFOS.code, title, "no distribution has two .dist-info in one folder"
        )
    parts = []
    for name, copies in sorted(twice.items()):
        folder = os.path.dirname(str(copies[0].get("dist_info") or ""))
        live = [c for c in copies if c.get("live") is True]
        listed = ", ".join(
            f"{c['version']} ({os.path.basename(str(c.get('dist_info') or ''))}"
            + (", what imports)" if len(live) == 1 and c is live[0] else ")")
            for c in copies
        )
        parts.append(f"{name} is installed twice in {folder}: {listed}")
    names = sorted(twice)
    return flag(
        codes.TWO_DIST_INFOS,
        title,
        "; ".join(parts),
        "`pip install --ignore-installed` writes a second copy over the first and leaves its "
        f".dist-info and files behind; {facts.clean_install} keeps the lock's copy and "
        f"quarantines the other's files (by hand: `pip uninstall {' '.join(names)}` until "
        "none is left, then install the version you want)",
    )


def _zombies(facts: Facts) -> Check:
    machine, alive = facts.machine, facts.alive
    gone = [(g, p) for g in machine.gpus for p in g.processes if alive.get(p.pid) is False]
    if gone:
        listed = ", ".join(
            f"pid {p.pid} on GPU {g.index} ({p.used_memory / GIB:.1f} GiB)" for g, p in gone
        )
        return flag(
            codes.GPU_MEMORY_HELD,
            "GPU memory",
            f"memory held by processes that no longer exist: {listed}",
            "a crashed job's context; it frees when its parent exits "
            "(or `nvidia-smi --gpu-reset` on an idle GPU)",
        )
    if not machine.gpus:
        return skip(codes.GPU_MEMORY_HELD.code, "GPU memory", "no GPU visible")
    return ok(codes.GPU_MEMORY_HELD.code, "GPU memory", "no memory held by dead processes")


def _available(facts: Facts) -> Check:
    machine = facts.machine
    if not machine.gpus:
        return skip(codes.TORCH_SEES_NO_CUDA.code, "torch.cuda", "no GPU visible")
    reason = facts.torch_unusable()
    if reason:
        return skip(codes.TORCH_SEES_NO_CUDA.code, "torch.cuda", reason)
    torch = facts.torch
    if not torch.get("cuda"):
        return flag(
            codes.TORCH_SEES_NO_CUDA,
            "torch.cuda",
            f"torch {torch.get('version')} is a CPU build on a machine with "
            f"{len(machine.gpus)} GPU(s)",
            "install the lock's CUDA build of torch",
        )
    if not torch.get("cuda_available"):
        return flag(
            codes.TORCH_SEES_NO_CUDA,
            "torch.cuda",
            f"torch.cuda.is_available() is False while NVML sees {len(machine.gpus)} GPU(s)"
            + (f": {torch['cuda_error']}" if torch.get("cuda_error") else ""),
            f"check CUDA_VISIBLE_DEVICES, the driver version ({codes.DRIVER_TOO_OLD.code}) "
            "and the container's GPU access",
        )
    return ok(
        codes.TORCH_SEES_NO_CUDA.code,
        "torch.cuda",
        f"{torch.get('device_count')} device(s) visible",
    )


def _against_lock(facts: Facts) -> Check:
    lock, dists = facts.lock, facts.dists
    if lock is None:
        return skip(codes.INSTALLED_DIFFERS.code, "lock", facts.lock_reason)
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
        return flag(
            codes.INSTALLED_DIFFERS,
            "lock",
            f"{counted(len(wrong), 'package')} {'differs' if len(wrong) == 1 else 'differ'} "
            f"from the lock: {shown}",
            f"{facts.clean_install} makes the environment the lock",
        )
    return ok(
        codes.INSTALLED_DIFFERS.code,
        "lock",
        f"{counted(len(lock.pip), 'package')} "
        f"{'matches' if len(lock.pip) == 1 else 'match'} the lock",
    )


def _cudnn(facts: Facts) -> Check:
    title = "cuDNN"
    reason = facts.torch_unusable()
    if reason:
        return skip(codes.CUDNN_MISMATCH.code, title, reason)
    torch = facts.torch
    if not torch.get("cuda"):
        return skip(codes.CUDNN_MISMATCH.code, title, "torch is a CPU build")
    used = decode_cudnn(torch.get("cudnn"))
    if not used:
        return skip(codes.CUDNN_MISMATCH.code, title, "torch reports no cuDNN")
    found = _cudnn_wheel(facts)
    if not found:
        return skip(
            codes.CUDNN_MISMATCH.code,
            title,
            f"no nvidia-cudnn wheel installed to compare cuDNN {used} with",
        )
    name, wheel = found
    if wheel.split(".")[:3] != used.split("."):
        loaded = [p for p in torch.get("mapped") or [] if "/libcudnn" in p]
        from_wheels = bool(loaded) and all("/site-packages/nvidia/" in p for p in loaded)
        return flag(
            codes.CUDNN_MISMATCH,
            title,
            f"torch uses cuDNN {used}, the installed wheel {name} is {wheel}"
            + (f" (loaded from {loaded[0]})" if loaded else ""),
            "another wheel wrote its libcudnn into the shared nvidia/cudnn/ folder "
            f"({codes.MIXED_NVIDIA_FAMILIES.code}); {facts.clean_install} keeps only the "
            "locked wheel"
            if from_wheels
            else "another libcudnn is loaded first (LD_LIBRARY_PATH or a system copy)",
        )
    return ok(codes.CUDNN_MISMATCH.code, title, f"{used} from {name}")


def _cudnn_wheel(facts: Facts) -> tuple[str, str] | None:
    """The installed nvidia-cudnn wheel torch's build belongs to: of -cu11 and -cu12 installed
    together, the one of torch.version.cuda's major (cu12's 8.9.2 for a CUDA 12.1 torch)."""
    wheels = sorted((n, v) for n, v in facts.dists.items() if n.startswith("nvidia-cudnn-"))
    cuda = facts.torch_cuda
    mine = [(n, v) for n, v in wheels if cuda and cuda_family(n) == str(cuda.major)]
    found = mine or wheels
    return found[0] if found else None


def _smoke(facts: Facts) -> Check:
    title = "smoke matmul"
    if not facts.machine.gpus and not facts.probe.smoke:
        return skip(codes.SMOKE_FAILED.code, title, "no GPU visible")
    reason = facts.torch_unusable()
    if reason:
        return skip(codes.SMOKE_FAILED.code, title, reason)
    results = facts.probe.smoke or []
    failed = [r for r in results if not r.get("ok")]
    if failed:
        return flag(
            codes.SMOKE_FAILED,
            title,
            "; ".join(f"GPU {r.get('index')}: {r.get('error')}" for r in failed),
            f"see the error; {codes.DRIVER_TOO_OLD.code}/{codes.ARCH_NOT_IN_BUILD.code} "
            "explain the usual causes",
        )
    if not results:
        return skip(codes.SMOKE_FAILED.code, title, "torch sees no CUDA device")
    return ok(
        codes.SMOKE_FAILED.code,
        title,
        ", ".join(
            f"GPU {r.get('index')} {float(r.get('seconds') or 0) * 1000:.1f} ms" for r in results
        ),
    )
