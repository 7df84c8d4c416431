"""Build small but real wheels and sdists for tests: METADATA of the real shape, WHEEL, RECORD."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def metadata_text(
    name: str,
    version: str,
    requires: tuple[str, ...] | list[str] = (),
    requires_python: str | None = None,
    extra: str = "",
) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    text = "\n".join(lines) + "\n"
    return text + extra + ("\n" if extra and not extra.endswith("\n") else "")


def build_wheel(
    directory: Path,
    name: str,
    version: str,
    *,
    requires=(),
    requires_python=None,
    tag: str = "py3-none-any",
    files: dict[str, bytes] | None = None,
    metadata: str | None = None,
    padding: int = 0,
) -> Path:
    """Write `{name}-{version}-{tag}.whl` into `directory` and return its path.

    `metadata` replaces the generated METADATA verbatim (e.g. a real torch METADATA); `padding`
    adds an incompressible file so range requests have something to skip.
    """
    directory.mkdir(parents=True, exist_ok=True)
    dist = canonicalize_name(name).replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    contents: dict[str, bytes] = dict(files or {})
    if not files:
        contents[f"{dist}/__init__.py"] = f"__version__ = {version!r}\n".encode()
    if padding:
        contents[f"{dist}/_padding.bin"] = hashlib.sha256(name.encode()).digest() * (
            padding // 32 + 1
        )
    contents[f"{info}/METADATA"] = (
        metadata or metadata_text(name, version, requires, requires_python)
    ).encode()
    contents[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: lockguard-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    ).encode()
    record_lines = [f"{path},{_record_hash(data)},{len(data)}" for path, data in contents.items()]
    record_lines.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = ("\n".join(record_lines) + "\n").encode()
    path = directory / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, data in contents.items():
            info_obj = zipfile.ZipInfo(member, date_time=(2024, 1, 1, 0, 0, 0))
            info_obj.compress_type = (
                zipfile.ZIP_STORED if member.endswith(".bin") else zipfile.ZIP_DEFLATED
            )
            info_obj.external_attr = 0o644 << 16
            archive.writestr(info_obj, data)
    return path


def build_sdist(
    directory: Path,
    name: str,
    version: str,
    *,
    requires=(),
    metadata_version: str = "2.2",
    dynamic: tuple[str, ...] = (),
    setup_py: str | None = None,
    pyproject: str | None = None,
    files: dict[str, str] | None = None,
    requires_python: str | None = None,
) -> Path:
    """Write `{name}-{version}.tar.gz` with PKG-INFO (and a buildable project when asked)."""
    directory.mkdir(parents=True, exist_ok=True)
    dist = canonicalize_name(name).replace("-", "_")
    root = f"{dist}-{version}"
    lines = [f"Metadata-Version: {metadata_version}", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Python: {requires_python}"] if requires_python else []
    lines += [f"Dynamic: {d}" for d in dynamic]
    lines += [f"Requires-Dist: {r}" for r in requires]
    members = {f"{root}/PKG-INFO": ("\n".join(lines) + "\n").encode()}
    if pyproject is not None:
        members[f"{root}/pyproject.toml"] = pyproject.encode()
    if setup_py is not None:
        members[f"{root}/setup.py"] = setup_py.encode()
    members[f"{root}/{dist}/__init__.py"] = b""
    for member, text in (files or {}).items():
        members[f"{root}/{member}"] = text.encode()
    path = directory / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for member, data in members.items():
            tar_info = tarfile.TarInfo(member)
            tar_info.size = len(data)
            tar_info.mtime = 1704067200
            archive.addfile(tar_info, io.BytesIO(data))
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
