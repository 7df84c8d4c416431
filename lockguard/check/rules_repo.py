"""Other files of the repository that contradict the lock.

LG130 a requirements*.txt / requirements*.in pin the lock does not satisfy
LG131 a Dockerfile base image (nvidia/cuda, pytorch/pytorch) with another CUDA or torch
LG132 a Dockerfile `pip install name==v` the lock does not satisfy
LG133 a pyproject.toml / setup.cfg dependency the lock does not satisfy
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterator, Mapping

from packaging.version import InvalidVersion, Version

from lockguard.check.lock_facts import LockFacts
from lockguard.model import codes, toml_read
from lockguard.model.codes import FindingCode
from lockguard.model.finding import Finding
from lockguard.model.names import canonical_name

HINT = "make the file agree with the lock (or change the intent and relock)"
_NVIDIA_CUDA = re.compile(
    r"^\s*FROM\s+(?:--platform=\S+\s+)?(?:[\w.-]+/)?nvidia/cuda:(\d+)\.(\d+)", re.I
)
_PYTORCH = re.compile(
    r"^\s*FROM\s+(?:--platform=\S+\s+)?pytorch/pytorch:(\d+\.\d+(?:\.\d+)?)-cuda(\d+)\.(\d+)", re.I
)
_PIN = re.compile(
    r"""(?<![\w.-])([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?)\s*==\s*([A-Za-z0-9.+!_-]+)"""
)


def repo_files(files: Mapping[str, str], facts: LockFacts) -> list[Finding]:
    out: list[Finding] = []
    for path, text in sorted(files.items()):
        name = path.rsplit("/", 1)[-1]
        if name.startswith("requirements") and name.endswith((".txt", ".in")):
            out += _requirements_file(path, text, facts)
        elif "dockerfile" in name.lower():
            out += _dockerfile(path, text, facts)
        elif name == "pyproject.toml":
            out += _pyproject(path, text, facts)
        elif name == "setup.cfg":
            out += _setup_cfg(path, text, facts)
    return out


def _check(
    req_text: str, facts: LockFacts, code: FindingCode, path: str, line: int, what: str
) -> Finding | None:
    # only when the repository has such files: parsing requirements costs the check ~10 ms of
    # imports (packaging.markers, packaging.tags), which a lock-only repository never pays
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(req_text)
    except InvalidRequirement:
        return None
    if req.marker is not None and not req.marker.evaluate(_environment(facts)):
        return None
    name = canonical_name(req.name)
    locked = facts.pip.get(name)
    if locked is None or req.url:
        return None
    try:
        ok = req.specifier.contains(Version(locked), prereleases=True)
    except InvalidVersion:
        return None
    if ok:
        return None
    return code.finding(
        f"{what} asks for {name}{req.specifier}, the lock has {name}=={locked}", HINT, path, line
    )


def _environment(facts: LockFacts) -> dict[str, str]:
    machine = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}.get(facts.platform, "x86_64")
    return {
        "platform_system": "Linux",
        "sys_platform": "linux",
        "platform_machine": machine,
        "os_name": "posix",
        "python_version": "3.11",
        "python_full_version": "3.11.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def _requirements_file(path: str, text: str, facts: LockFacts) -> list[Finding]:
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        line = line.split(" --hash", 1)[0].rstrip(" \\")
        finding = _check(line, facts, codes.REQUIREMENTS_FILE_PIN, path, number, path)
        if finding:
            out.append(finding)
    return out


def _dockerfile(path: str, text: str, facts: LockFacts) -> list[Finding]:
    out = []
    lock_cuda = facts.torch_cuda or facts.conda_cuda()
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        match = _NVIDIA_CUDA.match(raw)
        if (
            match
            and lock_cuda
            and (int(match.group(1)), int(match.group(2))) != (lock_cuda.major, lock_cuda.minor)
        ):
            out.append(
                codes.DOCKER_BASE_IMAGE.finding(
                    f"base image has CUDA {match.group(1)}.{match.group(2)}, the lock has "
                    f"CUDA {lock_cuda} ({facts.torch_cuda_why or 'conda cuda-version'})",
                    f"use an nvidia/cuda:{lock_cuda}.x image",
                    path,
                    number,
                )
            )
        match = _PYTORCH.match(raw)
        if match:
            image_torch, cuda = match.group(1), (int(match.group(2)), int(match.group(3)))
            if lock_cuda and cuda != (lock_cuda.major, lock_cuda.minor):
                out.append(
                    codes.DOCKER_BASE_IMAGE.finding(
                        f"base image has CUDA {cuda[0]}.{cuda[1]}, the lock has CUDA {lock_cuda}",
                        HINT,
                        path,
                        number,
                    )
                )
            if (
                facts.torch
                and Version(facts.torch).public != image_torch
                and not Version(facts.torch).public.startswith(image_torch + ".")
            ):
                out.append(
                    codes.DOCKER_BASE_IMAGE.finding(
                        f"base image ships torch {image_torch}, the lock has torch {facts.torch}",
                        HINT,
                        path,
                        number,
                    )
                )
    for number, command in _run_commands(lines):
        if not re.search(r"\bpip3?\s+install\b|-m\s+pip\s+install\b", command):
            continue
        for name, version in _PIN.findall(command):
            finding = _check(
                f"{name}=={version}",
                facts,
                codes.DOCKER_PIP_INSTALL,
                path,
                number,
                "RUN pip install",
            )
            if finding:
                out.append(finding)
    return out


def _run_commands(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(first line number, joined command) of every RUN instruction, continuations included."""
    number = 0
    while number < len(lines):
        line = lines[number]
        if re.match(r"^\s*RUN\b", line, re.I):
            start, parts = number + 1, [line]
            while parts[-1].rstrip().endswith("\\") and number + 1 < len(lines):
                number += 1
                parts.append(lines[number])
            yield start, " ".join(p.rstrip().rstrip("\\") for p in parts)
        number += 1


def _pyproject(path: str, text: str, facts: LockFacts) -> list[Finding]:
    try:
        data = toml_read.loads(text)
    except toml_read.TOMLDecodeError:
        return []
    project = data.get("project", {})
    requirements = list(project.get("dependencies", []))
    for group in (project.get("optional-dependencies") or {}).values():
        requirements += group
    return _listed(path, text, requirements, facts)


def _setup_cfg(path: str, text: str, facts: LockFacts) -> list[Finding]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    raw = parser.get("options", "install_requires", fallback="")
    return _listed(path, text, [r.strip() for r in raw.splitlines() if r.strip()], facts)


def _listed(path: str, text: str, requirements: list[str], facts: LockFacts) -> list[Finding]:
    out = []
    lines = text.splitlines()
    for item in requirements:
        if not isinstance(item, str):
            continue
        number = next((i for i, line in enumerate(lines, start=1) if item in line), None)
        finding = _check(item, facts, codes.PROJECT_DEPENDENCY, path, number or 1, path)
        if finding:
            out.append(finding)
    return out
