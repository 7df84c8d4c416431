"""The doctor's probe. Standard library only: the TARGET interpreter runs this file (`python -I
probe.py [--smoke]`), so it must not import lockguard or anything the target may lack.

It prints JSON lines: first the facts that need no torch (flushed, so a torch import that
crashes the process still leaves them), then the torch facts, then the smoke test's results.
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

CUDA_LIBS = re.compile(r"/(lib(cudart|cudnn[a-z_]*|nccl|cublas(Lt)?|nvrtc|nvJitLink|torch[a-z_]*|c10[a-z_]*)\.so[^/]*)$")
ENV_KEYS = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
            "PYTORCH_ALLOC_CONF", "CUDA_MODULE_LOADING", "TORCH_CUDA_ARCH_LIST", "DS_SKIP_CUDA_CHECK")


def emit(kind, data):
    sys.stdout.write(json.dumps({"kind": kind, "data": data}) + "\n")
    sys.stdout.flush()


def run(argv):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout + done.stderr).strip()


def cuda_home():
    for key in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(key):
            return os.environ[key]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda" if os.path.exists("/usr/local/cuda") else None


def tools():
    home = cuda_home()
    nvcc = os.path.join(home, "bin", "nvcc") if home and os.path.exists(os.path.join(home, "bin", "nvcc")) else shutil.which("nvcc")
    out = {"cuda_home": home, "nvcc_path": nvcc, "nvcc": None, "gcc": None, "ninja": None}
    if nvcc:
        text = run([nvcc, "--version"]) or ""
        match = re.search(r"release (\d+\.\d+)", text)
        out["nvcc"] = match.group(1) if match else None
    gcc = os.environ.get("CXX") or shutil.which("g++") or shutil.which("gcc")
    if gcc:
        text = run([gcc, "-dumpfullversion"]) or run([gcc, "-dumpversion"]) or ""
        out["gcc"] = text.splitlines()[0] if text else None
        out["gcc_path"] = gcc
    ninja = shutil.which("ninja")
    if ninja:
        out["ninja"] = run([ninja, "--version"])
    return out


def base_facts():
    try:
        from importlib.metadata import distributions

        dists = {}
        for dist in distributions():
            name = dist.metadata["Name"]
            if name:
                dists.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version)
    except Exception as exc:  # a broken dist-info must not kill the probe
        dists = {"_error": str(exc)}
    shm = None
    try:
        st = os.statvfs("/dev/shm")
        shm = st.f_frsize * st.f_blocks
    except OSError:
        pass
    link = None
    if os.path.lexists("/usr/local/cuda"):
        link = os.path.realpath("/usr/local/cuda")
    return {
        "python": {"version": platform.python_version(), "executable": sys.executable, "prefix": sys.prefix},
        "platform": {"system": platform.system(), "machine": platform.machine(), "release": platform.release()},
        "glibc": os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None,
        "distributions": dists,
        "environment": {k: v for k, v in os.environ.items() if k in ENV_KEYS or k.startswith("NCCL_")},
        "tools": tools(),
        "dev_shm_bytes": shm,
        "usr_local_cuda": link,
    }


def mapped_libraries():
    found = {}
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    match = CUDA_LIBS.search(path)
                    if match:
                        found.setdefault(path, match.group(1))
    except OSError:
        pass
    return sorted(found)


def torch_facts():
    import torch

    facts = {"version": str(torch.__version__), "file": getattr(torch, "__file__", None)}
    version = getattr(torch, "version", None)
    facts["cuda"] = getattr(version, "cuda", None)
    try:
        facts["cudnn"] = torch.backends.cudnn.version()
    except Exception as exc:
        facts["cudnn_error"] = str(exc)
    try:
        facts["cxx11_abi"] = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
    except Exception:
        facts["cxx11_abi"] = None
    try:
        facts["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as exc:
        facts["cuda_available"] = False
        facts["cuda_error"] = str(exc)
    try:
        facts["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception:
        facts["arch_list"] = []
    try:
        facts["nccl"] = list(torch.cuda.nccl.version()) if facts["cuda_available"] or facts["cuda"] else None
    except Exception:
        facts["nccl"] = None
    try:
        facts["device_count"] = torch.cuda.device_count() if facts["cuda_available"] else 0
        facts["devices"] = [
            {"index": i, "name": torch.cuda.get_device_name(i), "capability": list(torch.cuda.get_device_capability(i))}
            for i in range(facts["device_count"])
        ]
    except Exception as exc:
        facts["device_error"] = str(exc)
    facts["mapped"] = mapped_libraries()
    return facts


def smoke(torch_module):
    results = []
    for index in range(torch_module.cuda.device_count()):
        start = time.perf_counter()
        try:
            device = torch_module.device("cuda", index)
            a = torch_module.randn(1024, 1024, device=device)
            b = torch_module.randn(1024, 1024, device=device)
            c = a @ b
            torch_module.cuda.synchronize(device)
            results.append({"index": index, "ok": True, "seconds": round(time.perf_counter() - start, 4),
                            "checksum": float(c.float().sum().item())})
        except Exception as exc:
            results.append({"index": index, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return results


def main(argv):
    emit("base", base_facts())
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        emit("torch", {"missing": True, "error": str(exc)})
        return 0
    except Exception as exc:  # a broken torch that raises on import
        emit("torch", {"import_error": f"{type(exc).__name__}: {exc}", "mapped": mapped_libraries()})
        return 0
    emit("torch", torch_facts())
    if "--smoke" in argv:
        emit("smoke", smoke(sys.modules["torch"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
