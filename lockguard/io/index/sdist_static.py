"""The metadata of an sdist that can be read without building it (PEP 643 and PEP 621).

- PKG-INFO of Metadata-Version 2.2 or later whose Requires-Dist is not Dynamic holds exactly the
  requirements a wheel built from it will list (PEP 643: a field not marked Dynamic must match in
  every wheel), the extras' included (their `extra == "x"` markers). A Provides-Extra marked Dynamic
  (grouped_gemm's PKG-INFO 2.4 marks only that) is taken from those markers. A Requires-Python
  marked Dynamic is taken from pyproject.toml's [project] table when it is static there, else left
  out (the index's requires-python still filters the file): mamba-ssm 2.3.x marks only
  Requires-Python Dynamic.
- Else pyproject.toml's [project] table, when neither `dependencies` nor `optional-dependencies`
  is dynamic: PEP 621 forbids a backend to change what it does not list as dynamic. The version
  comes from PKG-INFO, or from the file name when `version` is dynamic.

What is Dynamic is never trusted: causal-conv1d's PKG-INFO lists `Dynamic: requires-dist` (its
setup.py computes them), so it is built, as pip builds it. Field names compare case-insensitively
(core metadata field names are case-insensitive; setuptools writes `Dynamic: requires-dist`).
Anything unreadable returns None: the caller builds the sdist.
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from email.parser import HeaderParser

from lockguard.model import toml_read

_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


def static_metadata(filename: str, version: str, archive: bytes) -> tuple[bytes, str] | None:
    """(core metadata, "pkg-info" or "pyproject") of the sdist `archive`; None: it must be built."""
    try:
        members = _top_level_files(filename, archive, ("PKG-INFO", "pyproject.toml"))
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, ValueError):
        return None
    project = _project_table(members.get("pyproject.toml"))
    pkg_info = members.get("PKG-INFO")
    if pkg_info is not None:
        message = HeaderParser().parsestr(pkg_info.decode("utf-8", errors="replace"))
        dynamic = {d.strip().lower() for d in message.get_all("Dynamic") or ()}
        if _metadata_version(message) >= (2, 2) and "requires-dist" not in dynamic:
            if not dynamic & {"requires-python", "provides-extra"}:
                return pkg_info, "pkg-info"
            if "requires-python" in dynamic:
                del message["Requires-Python"]
                python = _static(project, "requires-python")
                if isinstance(python, str):
                    message["Requires-Python"] = python
            if "provides-extra" in dynamic:
                del message["Provides-Extra"]
                requires = " ".join(message.get_all("Requires-Dist") or ())
                for extra in dict.fromkeys(_EXTRA_MARKER.findall(requires)):
                    message["Provides-Extra"] = extra
            return message.as_string().encode(), "pkg-info"
    return _from_project(project, pkg_info, version)


def _from_project(
    project: dict | None, pkg_info: bytes | None, version: str
) -> tuple[bytes, str] | None:
    if project is None or not isinstance(project.get("name"), str):
        return None
    dynamic = project.get("dynamic") or []
    if not isinstance(dynamic, list) or {"dependencies", "optional-dependencies"} & {
        str(d) for d in dynamic
    }:
        return None
    dependencies = project.get("dependencies", [])
    optional = project.get("optional-dependencies", {})
    if not isinstance(dependencies, list) or not isinstance(optional, dict):
        return None
    if pkg_info is not None:
        version = (
            HeaderParser().parsestr(pkg_info.decode("utf-8", errors="replace")).get("Version")
            or version
        )
    lines = ["Metadata-Version: 2.2", f"Name: {project['name']}", f"Version: {version}"]
    python = _static(project, "requires-python")
    if isinstance(python, str):
        lines.append(f"Requires-Python: {python}")
    lines += [f"Requires-Dist: {d}" for d in dependencies if isinstance(d, str)]
    for extra, requirements in optional.items():
        if not isinstance(requirements, list):
            return None
        lines.append(f"Provides-Extra: {extra}")
        for text in requirements:
            if isinstance(text, str):
                lines.append(f"Requires-Dist: {_with_extra(text, str(extra))}")
    return ("\n".join(lines) + "\n").encode(), "pyproject"


def _with_extra(text: str, extra: str) -> str:
    head, semicolon, marker = text.partition(";")
    condition = f'extra == "{extra}"'
    return (
        f"{head.strip()}; ({marker.strip()}) and {condition}"
        if semicolon and marker.strip()
        else f"{head.strip()}; {condition}"
    )


def _static(project: dict | None, key: str):
    if project is None or key in (project.get("dynamic") or []):
        return None
    return project.get(key)


def _project_table(data: bytes | None) -> dict | None:
    if data is None:
        return None
    try:
        project = toml_read.loads(data.decode("utf-8")).get("project")
    except (ValueError, UnicodeDecodeError):
        return None
    return project if isinstance(project, dict) else None


def _metadata_version(message) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in message.get("Metadata-Version", "1.0").split("."))
    except ValueError:
        return (1, 0)


def _top_level_files(filename: str, archive: bytes, names: tuple[str, ...]) -> dict[str, bytes]:
    """The files `names` directly inside the sdist's top folder (`pkg-1.0/PKG-INFO`)."""
    found: dict[str, bytes] = {}
    if filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            for name in zipped.namelist():
                base = name.split("/", 1)[-1]
                if name.count("/") == 1 and base in names and base not in found:
                    found[base] = zipped.read(name)
        return found
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tarred:
        for member in tarred.getmembers():
            base = member.name.split("/", 1)[-1]
            if (
                member.isfile()
                and member.name.count("/") == 1
                and base in names
                and base not in found
            ):
                extracted = tarred.extractfile(member)
                if extracted is not None:
                    found[base] = extracted.read()
    return found
