"""The doctor's probe. Standard library only: the TARGET interpreter runs this file (`python -I
probe.py [--smoke] [--import DIST=MODULE]...`), so it must not import lockguard or anything the
target may lack.

It prints JSON lines, each {"kind": ..., "data": ...}, flushed one by one so that an import that
kills the process still leaves what came before: "base" (facts that need no import), then for each
GPU package an "importing" line and its result ("torch" facts, "import" results), then "smoke".
version_code() is also what io/machine/library_probe.py calls on the libraries outside any
environment.
"""

import base64
import hashlib
import importlib
import importlib.util
import json
import os
import platform
import re
import sys
import time
import traceback

CUDA_LIBS = re.compile(
    r"/(lib(cudart|cudnn[a-z_]*|nccl|cublas(Lt)?|nvrtc|nvJitLink|torch[a-z_]*|c10[a-z_]*)\.so[^/]*)$"
)
FAMILY = re.compile(r"/lib(cudart|cublasLt|cublas|cudnn|nccl)\.so[^/]*$")
ENV_KEYS = (
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_VISIBLE_DEVICES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "CUDA_MODULE_LOADING",
    "TORCH_CUDA_ARCH_LIST",
    "DS_SKIP_CUDA_CHECK",
)
MISSING_LIBRARY = re.compile(
    r"(lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*): cannot open shared object file"
)
# kept equal to lockguard.model.system_facts.VERSION_CALLS (a test compares them)
VERSION_CALLS = {
    "nccl": "ncclGetVersion",
    "cudart": "cudaRuntimeGetVersion",
    "cudnn": "cudnnGetVersion",
    "cublasLt": "cublasLtGetVersion",
    "cublas": "cublasGetProperty",
}
TAIL = 15  # traceback lines kept


def emit(kind, data):
    sys.stdout.write(json.dumps({"kind": kind, "data": data}) + "\n")
    sys.stdout.flush()


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions():
    """(canonical name -> (version, dist-info folder), the first on sys.path winning; canonical
    name -> every dist-info of that name in the winner's folder, where there are several), read
    from the METADATA headers directly (importlib.metadata costs more than the whole probe). Of two
    dist-infos in one folder (pip install --ignore-installed over another version), the winner is
    the one whose files are on disk (live_copy)."""
    found: dict[
        str, tuple[str, str]
    ] = {}  # a local annotation: never evaluated by an old target Python
    twins: dict[str, list[tuple[str, str]]] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        here: dict[str, list[tuple[str, str]]] = {}
        for name in names:
            if name.endswith(".dist-info"):
                meta = os.path.join(entry, name, "METADATA")
            elif name.endswith(".egg-info"):
                meta = (
                    os.path.join(entry, name, "PKG-INFO")
                    if os.path.isdir(os.path.join(entry, name))
                    else os.path.join(entry, name)
                )
            else:
                continue
            headers = read_headers(meta)
            if headers.get("name") and headers.get("version"):
                here.setdefault(canonical(headers["name"]), []).append(
                    (headers["version"], os.path.join(entry, name))
                )
        for key, copies in here.items():
            if key in found:
                continue
            if len(copies) > 1:
                twins[key] = copies
                live = live_copy(entry or ".", [info for _version, info in copies])
                copies = [copies[live]] if live is not None else copies
            found[key] = copies[0]
    return found, twins


def record_digests(info):
    """RECORD path -> its sha256 (urlsafe base64), for the rows that carry one."""
    out = {}
    try:
        with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                parts = line.rstrip("\r\n").rsplit(",", 2)
                if len(parts) == 3 and parts[1].startswith("sha256="):
                    out[parts[0].strip('"')] = parts[1][7:]
    except OSError:
        pass
    return out


def file_digest(path, limit=64 << 20):
    if os.path.getsize(path) > limit:
        raise OSError("too large to hash here")
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def live_copy(entry, infos, sample=8):
    """The index of the dist-info whose RECORD digests the files on disk match, on the paths the
    RECORDs all list with different digests (a few, .py files first); None when they do not tell."""
    records = [record_digests(info) for info in infos]
    shared = set(records[0]).intersection(*records[1:])
    differing = sorted(
        (p for p in shared if len({r[p] for r in records}) > 1),
        key=lambda p: (not p.endswith(".py"), p),
    )
    scores = [0] * len(infos)
    for path in differing[:sample]:
        try:
            actual = file_digest(os.path.join(entry, path))
        except OSError:
            continue
        for index, record in enumerate(records):
            scores[index] += record[path] == actual
    best = max(scores)
    return scores.index(best) if best and scores.count(best) == 1 else None


def owner_of(path, infos):
    """The one dist-info (of `infos`) whose RECORD lists `path` with the digest of its bytes."""
    try:
        actual = file_digest(path)
    except (OSError, TypeError, ValueError):
        return None
    owners = [
        info
        for info in infos
        if record_digests(info).get(
            os.path.relpath(path, os.path.dirname(info)).replace(os.sep, "/")
        )
        == actual
    ]
    return owners[0] if len(owners) == 1 else None


def read_headers(path):
    headers = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for count, line in enumerate(handle):
                if not line.strip() or count > 200:
                    break
                key, _, value = line.partition(":")
                if key.lower() in ("name", "version") and key.lower() not in headers:
                    headers[key.lower()] = value.strip()
                if len(headers) == 2:
                    break
    except OSError:
        pass
    return headers


def providers(library, dists):
    """The installed distributions whose RECORD lists `library`, and whether that file is there."""
    out = []
    for name, (version, info) in sorted(dists.items()):
        try:
            with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as handle:
                rows = [line.split(",", 1)[0] for line in handle]
        except OSError:
            continue
        site = os.path.dirname(info)
        for row in rows:
            if row.rsplit("/", 1)[-1] == library:
                out.append(
                    {
                        "dist": name,
                        "version": version,
                        "file": row,
                        "present": os.path.exists(os.path.join(site, row)),
                    }
                )
    return out


def base_facts(dists, twins):
    return {
        "python": {
            "version": platform.python_version(),
            "executable": sys.executable,
            "prefix": sys.prefix,
        },
        "platform": {
            "system": platform.system(),
            "machine": platform.machine(),
            "release": platform.release(),
        },
        "glibc": os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None,
        "distributions": {name: version for name, (version, _info) in sorted(dists.items())},
        # several dist-infos of one name in one folder: each, and which one's files are on disk
        "duplicates": {
            name: [
                {"version": version, "dist_info": info, "live": info == dists[name][1]}
                for version, info in copies
            ]
            for name, copies in sorted(twins.items())
        },
        "environment": {
            k: v for k, v in sorted(os.environ.items()) if k in ENV_KEYS or k.startswith("NCCL_")
        },
    }


def mapped_libraries():
    found = set()
    try:
        with open("/proc/self/maps") as handle:
            for line in handle:
                parts = line.split(None, 5)
                if len(parts) == 6 and CUDA_LIBS.search(parts[5].strip()):
                    found.add(parts[5].strip())
    except OSError:
        pass
    return sorted(found)


def version_code(family, path):
    """What the library says its version is: an int, or [major, minor, patch] for cuBLAS."""
    # here, not at the top: a target Python built without libffi has no ctypes, and the probe's
    # other facts must still come back (a failed version call is caught by its caller)
    import ctypes

    lib = ctypes.CDLL(path)
    call = getattr(lib, VERSION_CALLS[family])
    if family in ("cudnn", "cublasLt"):
        call.restype = ctypes.c_size_t
        return int(call())
    if family == "cublas":
        parts = []
        for prop in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int(0)
            if call(prop, ctypes.byref(value)) != 0:
                raise OSError("cublasGetProperty failed")
            parts.append(value.value)
        return parts
    value = ctypes.c_int(0)
    status = call(ctypes.byref(value))
    if status != 0:
        raise OSError(f"{VERSION_CALLS[family]} returned {status}")
    return value.value


def traceback_tail(exc):
    """The traceback's last lines, without the probe's and importlib's own frames."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not (
            f.filename.startswith("<frozen ")
            or f.filename == __file__
            or f.filename.endswith(os.path.join("importlib", "__init__.py"))
        )
    ]
    lines = "".join(traceback.format_list(frames)).rstrip().splitlines()
    lines += traceback.format_exception_only(type(exc), exc)[-1:]
    return [line.rstrip() for line in lines][-TAIL:]


def try_import(dist, module, dists, twins):
    """Import one GPU package; a failure is data: the exception, its traceback, and for a missing
    shared library the installed distributions whose RECORD lists it. The version is that of the
    dist-info whose RECORD lists the imported module's file with its bytes (of two installs in
    one folder, the one that imports)."""
    emit("importing", {"dist": dist, "module": module})
    result = {"dist": dist, "module": module, "version": dists[dist][0] if dist in dists else None}
    try:
        imported = importlib.import_module(module)
        if dist in twins:
            infos = {info: version for version, info in twins[dist]}
            owner = owner_of(getattr(imported, "__file__", None), list(infos))
            if owner is not None:
                result["version"], result["dist_info"] = infos[owner], owner
    except (Exception, SystemExit) as exc:  # an import may raise anything, even SystemExit
        result["state"] = "broken"
        result["error"] = f"{type(exc).__name__}: {exc}"[:4000]
        result["traceback"] = traceback_tail(exc)
        missing = sorted(set(MISSING_LIBRARY.findall(str(exc))))
        result["missing_libraries"] = missing
        result["providers"] = {lib: providers(lib, dists) for lib in missing}
        return result
    result["state"] = "ok"
    return result


def torch_facts(torch):
    facts: dict[str, object] = {
        "version": str(torch.__version__),
        "file": getattr(torch, "__file__", None),
    }
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
        facts["nccl"] = (
            list(torch.cuda.nccl.version()) if facts["cuda_available"] or facts["cuda"] else None
        )
    except Exception:
        facts["nccl"] = None
    try:
        count = torch.cuda.device_count() if facts["cuda_available"] else 0
        facts["device_count"] = count
        facts["devices"] = [
            {
                "index": i,
                "name": torch.cuda.get_device_name(i),
                "capability": list(torch.cuda.get_device_capability(i)),
            }
            for i in range(count)
        ]
    except Exception as exc:
        facts["device_error"] = str(exc)
    mapped = mapped_libraries()
    versions: dict[str, object] = {}
    facts["mapped"] = mapped
    facts["mapped_versions"] = versions
    for path in mapped:
        match = FAMILY.search(path)
        if match:
            try:  # already loaded by torch: this opens no new library
                versions[path] = version_code(match.group(1), path)
            except Exception:
                continue
    return facts


def smoke(torch_module):
    results: list[dict[str, object]] = []
    for index in range(torch_module.cuda.device_count()):
        start = time.perf_counter()
        try:
            device = torch_module.device("cuda", index)
            a = torch_module.randn(1024, 1024, device=device)
            b = torch_module.randn(1024, 1024, device=device)
            c = a @ b
            torch_module.cuda.synchronize(device)
            results.append(
                {
                    "index": index,
                    "ok": True,
                    "seconds": round(time.perf_counter() - start, 4),
                    "checksum": float(c.float().sum().item()),
                }
            )
        except Exception as exc:
            results.append({"index": index, "ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return results


def main(argv):
    imports = [
        argv[i + 1].split("=", 1)
        for i, arg in enumerate(argv[:-1])
        if arg == "--import" and "=" in argv[i + 1]
    ]
    dists, twins = distributions()
    emit("base", base_facts(dists, twins))
    results = []
    torch_ok = False
    if "torch" in dists or importlib.util.find_spec("torch") is not None:
        result = try_import("torch", "torch", dists, twins)
        results.append(result)
        torch_ok = result["state"] == "ok"
        if torch_ok:
            emit("torch", {"state": "ok", **torch_facts(sys.modules["torch"])})
        else:
            emit(
                "torch",
                {"state": "broken", "installed": result["version"], "mapped": mapped_libraries()},
            )
    else:
        emit("torch", {"state": "missing"})
    for dist, module in imports:
        if dist != "torch" and dist in dists:
            if torch_ok:
                results.append(try_import(dist, module, dists, twins))
            else:
                results.append(
                    {
                        "dist": dist,
                        "module": module,
                        "version": dists[dist][0],
                        "state": "not tried",
                    }
                )
    emit("imports", results)
    if "--smoke" in argv and torch_ok:
        emit("smoke", smoke(sys.modules["torch"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
