"""The checks on what lies outside the environment: CUDA libraries loaded or reachable (LG302), the
CUDA toolkit JIT builds use (/usr/local/cuda, CUDA_HOME; LG303), its nvcc against torch (LG304),
the host compiler against nvcc (LG305), /dev/shm (LG307). Pure: facts in, checks out."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from lockguard.doctor.check import Check, Facts, cuda_of, flag, ok, skip
from lockguard.model import codes
from lockguard.model.finding import ERROR
from lockguard.model.json_types import JsonObject
from lockguard.model.system_facts import (
    LIBRARY_FAMILIES,
    WHEEL_OF_FAMILY,
    SharedLibrary,
    decode_library_version,
    version_prefix_equal,
)
from lockguard.model.wording import counted

GIB = 1 << 30
SHM_MIN = GIB
_FOREIGN = re.compile(r"/lib(nccl|cudart|cudnn)[^/]*$")
_FAMILY = re.compile(r"/lib(cudart|cublasLt|cublas|cudnn|nccl)\.so[^/]*$")
_LABEL = {
    "nccl": "NCCL",
    "cudnn": "cuDNN",
    "cudart": "CUDA runtime",
    "cublas": "cuBLAS",
    "cublasLt": "cuBLASLt",
}


@dataclass(frozen=True, slots=True)
class JitToolkit:
    """The toolkit torch.utils.cpp_extension (and so DeepSpeed, flash-attn source builds) uses:
    CUDA_HOME, else CUDA_PATH, else the first nvcc on PATH (its folder's parent), else
    /usr/local/cuda."""

    how: str
    home: str
    version: str | None
    nvcc: str | None
    exists: bool = True


def jit_toolkit(facts: Facts) -> JitToolkit | None:
    system = facts.system
    for key in ("CUDA_HOME", "CUDA_PATH"):
        named = system.toolkit(key)
        if named:
            return JitToolkit(
                f"{key}={named.path}",
                named.path,
                named.version,
                named.nvcc,
                named.target is not None,
            )
    if system.nvcc:
        first = system.nvcc[0]
        return JitToolkit(
            f"nvcc on PATH ({first.path})",
            os.path.dirname(os.path.dirname(first.path)),
            first.version,
            first.path,
        )
    local = system.toolkit("/usr/local/cuda")
    if local and local.target:
        return JitToolkit("/usr/local/cuda", local.path, local.version, local.nvcc)
    return None


def system_checks(facts: Facts) -> list[Check]:
    jit = jit_toolkit(facts)
    return [
        _libraries(facts),
        _cuda_toolkit(facts, jit),
        _nvcc(facts, jit),
        _gcc(facts, jit),
        _shm(facts),
    ]


# -- LG302: CUDA libraries torch mapped, and those the loader reaches outside the environment ------


def expected_versions(facts: Facts) -> dict[str, tuple[str, str]]:
    """SONAME -> (version, which distribution says so): the lock's wheel, else the installed one."""
    out: dict[str, tuple[str, str]] = {}
    sources = [(facts.lock.pip, "the lock's")] if facts.lock else []
    sources.append((facts.dists, "the installed"))
    for family in LIBRARY_FAMILIES:
        for pins, whose in sources:
            hit = next(
                ((n, v) for n, v in sorted(pins.items()) if n.startswith(WHEEL_OF_FAMILY[family])),
                None,
            )
            if hit:
                soname = f"lib{family}.so.{hit[1].split('.')[0]}"
                out.setdefault(soname, (hit[1], f"{whose} {hit[0]}"))
    return out


def _libraries(facts: Facts) -> Check:
    """LG302 with the registry's severity (a warning, as LG217 in `check --env` and clean-install):
    a library the loader reaches by name with another version than the wheel's; an error only in
    the case the registry names, torch having loaded one from outside its wheels."""
    title = "CUDA libraries"
    mapped = facts.torch.get("mapped") or []
    versions = facts.torch.get("mapped_versions") or {}
    foreign = [p for p in mapped if _FOREIGN.search(p) and not wheel_owned(p)]
    if foreign:
        shown = ", ".join(p + _version_note(p, versions) for p in foreign)
        return flag(
            codes.LIBRARY_OUTSIDE_WHEELS,
            title,
            f"torch loaded from outside its wheels: {shown}",
            "a system copy (ld.so.conf.d or LD_LIBRARY_PATH) shadows the wheel's; unset "
            "LD_LIBRARY_PATH or remove that directory from it (NCCL shadowing shows as "
            "'NCCL error: unhandled system error')",
            severity=ERROR,
        )
    expected = expected_versions(facts)
    clashes, notes = [], []
    for soname, (version, whose) in sorted(expected.items()):
        lib = facts.system.first_reachable(soname)
        if lib is None:
            continue
        if lib.version is None:
            notes.append(f"{lib.path} (version unknown, via {lib.via})")
        elif not version_prefix_equal(lib.version, version):
            clashes.append((lib, version, whose))
        else:
            notes.append(f"{lib.path} {lib.version} = {whose}")
    if clashes:
        # torch's own RPATH finds its wheel's copy first; the shadowing happens when something opens
        # this SONAME by name before torch (cupy, mpi4py, a custom op): torch then reuses that copy
        lines = [
            f"{lib.path} ({_LABEL[lib.family]} {lib.version}, via {lib.via}) is the "
            f"{lib.lookup_name} a process finds by name; {whose} is {version}"
            for lib, version, whose in clashes
        ]
        loaded = (
            f" (torch loaded its wheels' {counted(len(mapped), 'library', 'libraries')} here; "
            "a process that opens one of these by name first gets the other copy)"
            if mapped
            else ""
        )
        return flag(
            codes.LIBRARY_OUTSIDE_WHEELS,
            title,
            "; ".join(lines) + loaded,
            _shadow_fix(clashes[0][0]),
        )
    if mapped:
        return ok(
            codes.LIBRARY_OUTSIDE_WHEELS.code,
            title,
            f"torch loaded {counted(len(mapped), 'library', 'libraries')}, all from the "
            "environment's wheels",
        )
    if not expected:
        reachable = [lib for lib in facts.system.libraries if lib.family in LIBRARY_FAMILIES]
        if not reachable:
            return ok(
                codes.LIBRARY_OUTSIDE_WHEELS.code,
                title,
                "no CUDA, cuDNN, NCCL or cuBLAS library reachable outside the environment",
            )
        return skip(
            codes.LIBRARY_OUTSIDE_WHEELS.code,
            title,
            "nothing to compare the libraries reachable outside the environment with: "
            "no lock, no nvidia wheel installed",
        )
    return ok(
        codes.LIBRARY_OUTSIDE_WHEELS.code,
        title,
        "; ".join(notes) if notes else "no library outside the environment shadows the wheels",
    )


def wheel_owned(path: str) -> bool:
    return (
        "/site-packages/nvidia/" in path
        or "/site-packages/torch/" in path
        or "/site-packages/nvidia_" in path
    )


def _version_note(path: str, versions: JsonObject) -> str:
    match = _FAMILY.search(path)
    if match is None:
        return ""
    version = decode_library_version(match.group(1), versions.get(path))
    return f" ({_LABEL[match.group(1)]} {version})" if version else ""


def _shadow_fix(lib: SharedLibrary) -> str:
    folder = os.path.dirname(lib.path)
    if lib.via == "LD_LIBRARY_PATH":
        where = f"remove {folder} from LD_LIBRARY_PATH"
    elif lib.via.startswith("/etc/ld.so.conf.d/"):
        where = f"remove {folder} from {lib.via} and run ldconfig"
    else:
        where = (
            f"remove {lib.path} from the loader's cache (its directory is in /etc/ld.so.conf or "
            "a file under it; run ldconfig after)"
        )
    return (
        f"{where}: loaded before torch (by cupy, mpi4py, a custom op), it replaces the wheel's "
        "copy in torch too (NCCL shows this as 'NCCL error: unhandled system error' or an "
        "undefined ncclComm* symbol)"
    )


# -- LG303: the toolkit JIT builds use, against the lock's CUDA ------------------------------------


def _cuda_toolkit(facts: Facts, jit: JitToolkit | None) -> Check:
    title = "CUDA toolkit"
    local = facts.system.toolkit("/usr/local/cuda")
    if jit is None:
        return skip(
            codes.JIT_TOOLKIT_MISMATCH.code,
            title,
            "no CUDA toolkit: /usr/local/cuda, CUDA_HOME, CUDA_PATH and nvcc on PATH "
            "are all absent",
        )
    if not jit.exists:
        return flag(
            codes.JIT_TOOLKIT_MISMATCH,
            title,
            f"{jit.how} does not exist",
            "point it at a CUDA toolkit folder (one with bin/nvcc), or unset it",
        )
    wanted = facts.wanted_cuda()
    if wanted is None:
        return skip(
            codes.JIT_TOOLKIT_MISMATCH.code,
            title,
            f"no CUDA version to compare with: {facts.no_cuda_reference()}",
        )
    cuda, whose = wanted
    have = cuda_of(jit.version)
    if have is None:
        return skip(
            codes.JIT_TOOLKIT_MISMATCH.code,
            title,
            f"the version of the toolkit at {jit.home} is unreadable: it has no version.json, "
            "no version.txt, and no nvcc that answers",
        )
    # /usr/local/cuda when the JIT builds use another toolkit: worth naming
    other = local if local and local.target and jit.how != "/usr/local/cuda" else None
    local_note = (
        f"/usr/local/cuda -> {other.target} is CUDA {other.version or 'of unknown version'}"
        if other
        else ""
    )
    if have != cuda:
        jit_users = [d for d in ("deepspeed", "flash-attn", "xformers", "apex") if d in facts.dists]
        users = f" ({', '.join(jit_users)} installed)" if jit_users else ""
        source = (
            f"{jit.how} -> {local.target}" if jit.how == "/usr/local/cuda" and local else jit.how
        )
        parts = [f"JIT builds{users} use CUDA {jit.version} from {source}"] + (
            [local_note] if local_note else []
        )
        return flag(
            codes.JIT_TOOLKIT_MISMATCH,
            title,
            "; ".join(parts + [f"{whose} CUDA is {cuda}"]),
            f"point CUDA_HOME at a CUDA {cuda} toolkit before DeepSpeed or flash-attn build "
            "anything: with conda, `export CUDA_HOME=$CONDA_PREFIX` "
            f"(cuda-nvcc={cuda} from the lock); else a CUDA {cuda} install, "
            f"e.g. /usr/local/cuda-{cuda}",
        )
    unused = (
        f"; not /usr/local/cuda -> {other.target} (CUDA {other.version or '?'})" if other else ""
    )
    return ok(
        codes.JIT_TOOLKIT_MISMATCH.code,
        title,
        f"JIT builds use CUDA {jit.version} from {jit.how}, {whose} CUDA{unused}",
    )


# -- LG304 / LG305: nvcc against torch, gcc against nvcc -------------------------------------------


def _nvcc(facts: Facts, jit: JitToolkit | None) -> Check:
    title = "nvcc"
    reason = facts.torch_unusable()
    if reason:
        return skip(codes.NVCC_TORCH_MISMATCH.code, title, reason)
    torch_cuda = facts.torch_cuda
    if torch_cuda is None:
        return skip(codes.NVCC_TORCH_MISMATCH.code, title, "torch is a CPU build")
    nvcc = cuda_of(jit.version) if jit else None
    if jit is None or jit.nvcc is None:
        return skip(codes.NVCC_TORCH_MISMATCH.code, title, "no nvcc on this machine")
    if nvcc is None:
        return skip(codes.NVCC_TORCH_MISMATCH.code, title, f"{jit.nvcc} did not report its version")
    rules = [r for r in (facts.knowledge.nvcc_rule(n) for n in facts.dists) if r]
    rule = rules[0] if rules else None
    where = f"nvcc {nvcc} at {jit.nvcc}"
    if rule and not rule.accepts(nvcc, torch_cuda):
        return flag(
            codes.NVCC_TORCH_MISMATCH,
            title,
            f"{where} vs torch.version.cuda {torch_cuda}: {rule.package}'s JIT ops refuse "
            f"this pair ({rule.origin})",
            f"use a CUDA {torch_cuda} toolkit (CUDA_HOME), or {rule.override_env}=1 "
            "at your own risk",
            severity=ERROR,
        )
    if nvcc.major != torch_cuda.major:
        return flag(
            codes.NVCC_TORCH_MISMATCH,
            title,
            f"{where} vs torch.version.cuda {torch_cuda}: torch's cpp_extension refuses to build "
            "extensions with another CUDA major",
            f"use a CUDA {torch_cuda} toolkit (CUDA_HOME) for extension builds",
        )
    if nvcc != torch_cuda:
        return flag(
            codes.NVCC_TORCH_MISMATCH,
            title,
            f"{where} vs torch.version.cuda {torch_cuda}: minor mismatch",
            f"extensions usually work; a CUDA {torch_cuda} toolkit avoids surprises",
        )
    return ok(codes.NVCC_TORCH_MISMATCH.code, title, f"{where} matches torch.version.cuda")


def _gcc(facts: Facts, jit: JitToolkit | None) -> Check:
    title = "host gcc"
    gcc = facts.system.gcc
    if gcc is None:
        return skip(codes.GCC_NEWER_THAN_NVCC.code, title, "no C++ compiler on PATH")
    if gcc.version is None:
        return skip(codes.GCC_NEWER_THAN_NVCC.code, title, f"{gcc.path} did not report its version")
    nvcc = cuda_of(jit.version) if jit and jit.nvcc else None
    if nvcc is None:
        return skip(codes.GCC_NEWER_THAN_NVCC.code, title, "no nvcc to compare with")
    toolkit = facts.knowledge.toolkit(nvcc)
    if toolkit is None:
        return skip(
            codes.GCC_NEWER_THAN_NVCC.code, title, f"nvcc {nvcc} is not in lockguard's CUDA table"
        )
    head = gcc.version.split(".")[0]
    major = int(head) if head.isdigit() else 0
    if major > toolkit.max_gcc:
        return flag(
            codes.GCC_NEWER_THAN_NVCC,
            title,
            f"gcc {gcc.version} ({gcc.path}) is newer than nvcc {nvcc} accepts "
            f"(<= {toolkit.max_gcc}; {toolkit.origin})",
            f"install gcc {toolkit.max_gcc} and point CC/CXX at it "
            f"(conda: gxx_linux-64={toolkit.max_gcc})",
        )
    return ok(
        codes.GCC_NEWER_THAN_NVCC.code,
        title,
        f"gcc {gcc.version} <= {toolkit.max_gcc} (nvcc {nvcc})",
    )


def _shm(facts: Facts) -> Check:
    size = facts.system.dev_shm_bytes
    if size is None:
        return skip(codes.DEV_SHM_SMALL.code, "/dev/shm", "no /dev/shm on this machine")
    if size < SHM_MIN:
        return flag(
            codes.DEV_SHM_SMALL,
            "/dev/shm",
            f"/dev/shm is {size / (1 << 20):.0f} MiB",
            "DataLoader workers and NCCL need more: run containers with --shm-size=8g "
            "(or --ipc=host)",
        )
    return ok(codes.DEV_SHM_SMALL.code, "/dev/shm", f"{size / GIB:.1f} GiB")
