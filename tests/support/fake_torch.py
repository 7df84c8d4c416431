"""A small fake `torch` package for the doctor's probe: the attributes the probe reads, and real
shared libraries it maps (ctypes, RTLD_GLOBAL) so /proc/self/maps has something real to read."""

from __future__ import annotations

import json
from pathlib import Path

INIT = """
import ctypes, json, os
_config = json.load(open(os.path.join(os.path.dirname(__file__), "fake_config.json")))
if _config.get("crash") == "segfault":
    import sys
    sys.stderr.write("loading libtorch_cuda.so\\\\n"); sys.stderr.flush()
    ctypes.string_at(0)
if _config.get("crash") == "raise":
    raise OSError("libcudnn.so.8: cannot open shared object file: No such file or directory")
if _config.get("crash") == "import_error":
    raise ImportError(_config.get(
        "message", "libcudnn.so.8: cannot open shared object file: No such file or directory"
    ))
for _lib in _config.get("libs", []):
    ctypes.CDLL(_lib, mode=ctypes.RTLD_GLOBAL)
__version__ = _config["version"]


class _Tensor:
    def __init__(self, value):
        self.value = value

    def __matmul__(self, other):
        if _config.get("smoke_error"):
            raise RuntimeError(_config["smoke_error"])
        return _Tensor(self.value * other.value * 1024)

    def float(self):
        return self

    def sum(self):
        return self

    def item(self):
        return float(self.value)


def device(kind, index):
    return (kind, index)


def randn(*shape, device=None):
    return _Tensor(1.0)


class version:
    cuda = _config.get("cuda")


class _C:
    _GLIBCXX_USE_CXX11_ABI = _config.get("cxx11_abi", False)


class backends:
    class cudnn:
        @staticmethod
        def version():
            return _config.get("cudnn")


class cuda:
    @staticmethod
    def is_available():
        return _config.get("cuda_available", False)

    @staticmethod
    def get_arch_list():
        return _config.get("arch_list", [])

    @staticmethod
    def synchronize(device=None):
        return None

    @staticmethod
    def device_count():
        return len(_config.get("devices", []))

    @staticmethod
    def get_device_name(i):
        return _config["devices"][i]["name"]

    @staticmethod
    def get_device_capability(i):
        return tuple(_config["devices"][i]["capability"])

    class nccl:
        @staticmethod
        def version():
            return tuple(_config.get("nccl", (2, 18, 1)))
"""


def install_fake_torch(site: Path, config: dict) -> None:
    package = site / "torch"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(INIT)
    (package / "fake_config.json").write_text(json.dumps(config))
    info = site / f"torch-{config['version']}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: torch\nVersion: {config['version']}\n"
    )
    (info / "RECORD").write_text("")


def add_dist(site: Path, name: str, version: str, files: tuple[str, ...] = ()) -> None:
    """A dist-info whose RECORD lists `files` (paths relative to site-packages; not created)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    rows = [f"{path},sha256=AAAA,1" for path in files] + [
        f"{info.name}/METADATA,,",
        f"{info.name}/RECORD,,",
    ]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


def add_package(site: Path, dist: str, version: str, module: str, body: str) -> None:
    """A distribution with one module whose __init__ runs `body` (a GPU package that fails to
    import)."""
    add_dist(site, dist, version, (f"{module}/__init__.py",))
    (site / module).mkdir(exist_ok=True)
    (site / module / "__init__.py").write_text(body)


def fake_torch_wheel(
    directory: Path, config: dict, *, requires=(), extra: dict[str, bytes] | None = None
) -> Path:
    """A real wheel of the fake torch at config["version"] (pip installs it like any other): its
    version lives in torch/fake_config.json, so two versions share torch/__init__.py byte for byte
    and differ in that file, as two real torch versions differ in torch/version.py."""
    from tests.support.wheels import build_wheel

    files = {
        "torch/__init__.py": INIT.encode(),
        "torch/fake_config.json": json.dumps(config).encode(),
        "torch/version.py": f"__version__ = {config['version']!r}\n".encode(),
        **(extra or {}),
    }
    return build_wheel(directory, "torch", config["version"], requires=requires, files=files)
