"""A conda environment.yml: channels, conda dependencies and its `pip:` section, each with its line.

PyYAML reads the file (lockfiles/yaml_adapter.py; its composed nodes carry line numbers). The CUDA
stack's own packages do not become conda specs, because lockguard plans them from `cuda`:
`cudatoolkit`, `cuda-version`, `pytorch-cuda` (and `cpuonly`) become `cuda`, `sysroot_linux-64`
becomes `glibc`, `python` becomes `python`, and the pytorch channel's `pytorch`/`torchvision`/
`torchaudio` become pip requirements (lockguard installs torch from wheels). Every such change is
written down as a note.
"""

from __future__ import annotations

import re

from lockguard.adopt.facts import (
    CHANNEL,
    CONDA,
    CUDA,
    ENV_NAME,
    GLIBC,
    PIP,
    PYTHON,
    Origin,
    SourceFacts,
)
from lockguard.adopt.requirements_file import parse_requirements_text
from lockguard.lockfiles.syntax import LockSyntaxError
from lockguard.lockfiles.yaml_adapter import MappingNode, Node, ScalarNode, SequenceNode, compose

_SPEC = re.compile(r"^\s*(?:[^:\s]+::)?([A-Za-z0-9_.\-]+)\s*(.*?)\s*$")
_VERSION = re.compile(r"\d+(?:\.\d+)*")
# what the intent's `name` accepts (model/intent_parse.py)
_ENV_NAME = re.compile(r"[A-Za-z0-9_.-]+")
CUDA_NAMES = ("cudatoolkit", "cuda-version", "pytorch-cuda", "cuda-toolkit", "cuda")
TORCH_NAMES = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}


def parse_environment_yml(text: str, file: str) -> tuple[SourceFacts, list[tuple[str, Origin]]]:
    out = SourceFacts()
    includes: list[tuple[str, Origin]] = []
    try:
        root = compose(text)
    except LockSyntaxError as exc:
        out.skip(Origin(file, exc.line), "(the whole file)", exc.message)
        return out, includes
    if not isinstance(root, MappingNode):
        out.skip(
            Origin(file, 1),
            "(the whole file)",
            "not a conda environment file (no mapping at the top)",
        )
        return out, includes
    for key, value in root.value:
        if key.value == "channels" and isinstance(value, SequenceNode):
            for item in value.value:
                origin = Origin(file, item.start_mark.line + 1)
                if item.value == "nodefaults":
                    out.notes.append(
                        f"{origin}: nodefaults left out (lockguard's environment.yml always has it)"
                    )
                else:
                    out.add(CHANNEL, str(item.value), origin)
        elif key.value == "dependencies" and isinstance(value, SequenceNode):
            for item in value.value:
                origin = Origin(file, item.start_mark.line + 1)
                if isinstance(item, ScalarNode):
                    conda_spec(str(item.value), origin, out)
                elif (
                    isinstance(item, MappingNode) and item.value and item.value[0][0].value == "pip"
                ):
                    includes += _pip_section(item.value[0][1], file, out)
                else:
                    out.skip(origin, "(a dependency)", "neither a conda spec nor a pip: section")
        elif key.value == "name" and isinstance(value, ScalarNode) and value.value:
            origin = Origin(file, key.start_mark.line + 1)
            if _ENV_NAME.fullmatch(str(value.value)):
                out.add(ENV_NAME, str(value.value), origin, f"name: {value.value}")
            else:
                out.skip(
                    origin,
                    f"name: {value.value}",
                    "an intent's name is letters, digits, '.', '_' and '-'",
                )
        elif key.value not in ("name", "prefix", "variables"):
            out.skip(
                Origin(file, key.start_mark.line + 1),
                f"{key.value}:",
                "not a key conda env files use",
            )
    return out, includes


def _pip_section(node: Node, file: str, out: SourceFacts) -> list[tuple[str, Origin]]:
    includes: list[tuple[str, Origin]] = []
    if not isinstance(node, SequenceNode):
        return includes
    for item in node.value:
        line = item.start_mark.line + 1
        facts, found = parse_requirements_text(str(item.value), file)
        # the requirements parser counts from 1 within the item: put the file's line back
        for fact in facts.facts:
            out.add(fact.key, fact.value, Origin(file, line), fact.why)
        out.skipped += [type(s)(Origin(file, line), s.text, s.reason) for s in facts.skipped]
        out.notes += [note.replace(f"{file}:1:", f"{file}:{line}:") for note in facts.notes]
        includes += [(path, Origin(file, line)) for path, _origin in found]
    return includes


def conda_spec(text: str, origin: Origin, out: SourceFacts) -> None:
    """One conda dependency: the CUDA stack's packages become intent keys, the rest stays a spec."""
    match = _SPEC.match(text)
    if not match:
        out.skip(origin, text, "not a conda MatchSpec")
        return
    name, constraint = match.group(1), match.group(2)
    version = _VERSION.search(constraint)
    if name == "python":
        if version:
            out.add(PYTHON, ".".join(version.group(0).split(".")[:2]), origin, text)
        return
    if name in CUDA_NAMES:
        if version and len(version.group(0).split(".")) >= 2:
            cuda = ".".join(version.group(0).split(".")[:2])
            out.add(CUDA, cuda, origin, text)
            out.notes.append(
                f'{origin}: {text} became cuda = "{cuda}" '
                "(lockguard plans the CUDA packages from it)"
            )
        else:
            out.skip(origin, text, f"{name} without a major.minor version says no CUDA version")
        return
    if name == "cpuonly":
        out.add(CUDA, "none", origin, text)
        return
    if name.startswith("sysroot_") and version:
        out.add(GLIBC, ".".join(version.group(0).split(".")[:2]), origin, text)
        out.notes.append(f"{origin}: {text} became glibc (lockguard picks the sysroot from it)")
        return
    if name in TORCH_NAMES:
        requirement = TORCH_NAMES[name] + _pip_specifier(constraint)
        out.add(PIP, requirement, origin, text)
        out.notes.append(
            f"{origin}: conda's {text} became the pip requirement {requirement} "
            "(lockguard installs torch from wheels)"
        )
        return
    if name == "pip":
        out.notes.append(f"{origin}: pip left out (lockguard adds it when there is a pip section)")
        return
    out.add(CONDA, " ".join(text.split()), origin)


def _pip_specifier(constraint: str) -> str:
    """conda's version constraint as a pip specifier: `=2.1` / `2.1.*` -> `==2.1.*`, `>=2` stays."""
    constraint = constraint.replace(" ", "")
    if not constraint:
        return ""
    if constraint.startswith("=") and not constraint.startswith("=="):
        constraint = constraint[1:].split("=")[0]  # drop a build string: 2.1.0=py3.9_cuda12.1_0
        return (
            f"=={constraint}"
            if constraint.endswith("*") or constraint.count(".") >= 2
            else f"=={constraint}.*"
        )
    if constraint[0].isdigit():
        constraint = constraint.split("=")[0]
        return (
            f"=={constraint}"
            if constraint.endswith("*") or constraint.count(".") >= 2
            else f"=={constraint}.*"
        )
    return constraint
