"""Wheel tags the *target* accepts (platform, Python, glibc from the intent; never the host's)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from packaging import tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from lockguard.model.target import Target

_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


def platform_tags(target: Target) -> list[str]:
    machine = target.machine
    if target.system == "Linux":
        glibc_minor = int((target.glibc or "2.17").split(".")[1])
        out = []
        for minor in range(glibc_minor, 4, -1):
            out.append(f"manylinux_2_{minor}_{machine}")
            if minor in _LEGACY_MANYLINUX and machine in (
                "x86_64",
                "i686",
                "aarch64",
                "ppc64le",
                "s390x",
            ):
                out.append(f"{_LEGACY_MANYLINUX[minor]}_{machine}")
        return out + [f"linux_{machine}"]
    if target.system == "Darwin":
        arch = "arm64" if machine == "arm64" else "x86_64"
        versions = [(major, 0) for major in range(15, 10, -1)]
        if arch == "x86_64":
            versions += [(10, minor) for minor in range(16, 8, -1)]
        out = []
        for major, minor in versions:
            out += [f"macosx_{major}_{minor}_{arch}", f"macosx_{major}_{minor}_universal2"]
            if arch == "x86_64":
                out += [f"macosx_{major}_{minor}_intel", f"macosx_{major}_{minor}_universal"]
        return out
    return ["win_amd64"]


@lru_cache(maxsize=32)
def _priorities(target: Target) -> dict[tags.Tag, int]:
    version = (target.python.major, target.python.minor)
    interpreter = f"cp{version[0]}{version[1]}"
    platforms = platform_tags(target)
    ordered = list(
        tags.cpython_tags(
            python_version=version, abis=[interpreter, "abi3", "none"], platforms=platforms
        )
    )
    ordered += list(
        tags.compatible_tags(python_version=version, interpreter=interpreter, platforms=platforms)
    )
    return {tag: rank for rank, tag in enumerate(ordered)}


def wheel_rank(target: Target, filename: str) -> int | None:
    """The priority of a wheel on the target (lower is better); None when it does not fit."""
    try:
        _name, _version, _build, file_tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    priorities = _priorities(target)
    ranks = [priorities[t] for t in file_tags if t in priorities]
    return min(ranks) if ranks else None


def coarse_filename_filter(target: Target) -> tuple[Callable[[str], bool], str]:
    """A cheap test on a file name that drops wheels for other OSes, CPUs and Pythons before any
    parsing (a project like numpy lists thousands of files; a target can use a few dozen).
    Returns (keep, key): `key` names the filter, for caches of filtered pages."""
    machine = {"AMD64": "amd64"}.get(target.machine, target.machine)
    os_words = {"Linux": ("linux",), "Darwin": ("macosx",), "Windows": ("win",)}[target.system]
    cp = f"cp{target.python.major}{target.python.minor}"
    decided: dict[
        str, bool
    ] = {}  # "python-abi-platform" tails repeat across files: decide each once

    def decide(python: str, abi: str, platform: str) -> bool:
        other_os = not any(w in platform for w in os_words)
        musl_only = "musllinux" in platform and "manylinux" not in platform
        if platform != "any" and (other_os or machine not in platform or musl_only):
            return False
        if abi == "abi3" or "py3" in python or python.startswith("py"):
            return True
        return cp in python.split(".")

    def keep(filename: str) -> bool:
        if not filename.endswith(".whl"):
            return True  # sdists fit every target
        head, sep, tail = filename[:-4].rpartition("-")
        head, _, abi = head.rpartition("-")
        head, _, python = head.rpartition("-")
        if not sep or not head:
            return False
        triple = f"{python}-{abi}-{tail}"
        found = decided.get(triple)
        if found is None:
            found = decided[triple] = decide(python, abi, tail)
        return found

    return keep, f"{target.platform}-{cp}"
