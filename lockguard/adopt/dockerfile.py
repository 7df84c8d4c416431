"""Dockerfiles: the CUDA of the base image, the Python the image installs, and its pip/conda
installs.

A small parser (the instruction grammar is line-based): continuation lines are joined, comments
dropped, `ARG`/`ENV` defaults substituted into `FROM` and `RUN`. What it reads:
- `FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu20.04` -> cuda 12.1;
  `FROM pytorch/pytorch:2.1.0-cuda12.1-...` -> cuda 12.1 and torch==2.1.0;
  `FROM python:3.9-slim` -> python 3.9;
- `python3.9` anywhere in a RUN (apt-get install, update-alternatives, `python3.9 -m pip`)
  -> python 3.9;
- `pip install ...` arguments, as in a requirements file (`-r file` is followed by the reader);
- `conda install`/`mamba install` packages and `-c` channels.
Every other instruction says nothing about the intent and is not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lockguard.adopt.conda_env import conda_spec
from lockguard.adopt.facts import CHANNEL, CUDA, PIP, PYTHON, Origin, SourceFacts
from lockguard.adopt.requirements_file import pip_arguments, split_command

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.S)
_NVIDIA_CUDA = re.compile(r"^(?:[\w.-]+(?::\d+)?/)?nvidia/cuda:(\d+)\.(\d+)(?:\.\d+)?(?:-|$)")
_PYTORCH = re.compile(r"^(?:[\w.-]+/)?pytorch/pytorch:(\d+\.\d+(?:\.\d+)?)-cuda(\d+)\.(\d+)")
_PYTHON_IMAGE = re.compile(r"^(?:[\w.-]+/)?python:(3\.\d+)")
_PYTHON_WORD = re.compile(r"(?<![\w.-])python(3\.\d{1,2})(?![\d])")
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?")


def parse_dockerfile(text: str, file: str) -> tuple[SourceFacts, list[tuple[str, Origin]]]:
    out = SourceFacts()
    includes: list[tuple[str, Origin]] = []
    variables: dict[str, str] = {}
    for number, instruction, argument, physical in _instructions(text):
        origin = Origin(file, number)
        argument = _substitute(argument, variables)
        if instruction in ("ARG", "ENV"):
            _define(argument, variables, instruction)
        elif instruction == "FROM":
            _from(argument, origin, out)
        elif instruction == "RUN":
            facts, skipped = len(out.facts), len(out.skipped)
            includes += _run(argument, origin, out)
            _exact_lines(out, facts, skipped, number, physical)
    return out, includes


def _exact_lines(
    out: SourceFacts, facts: int, skipped: int, start: int, physical: list[str]
) -> None:
    """A RUN continued over several lines: name the line each value is written on."""
    if len(physical) < 2:
        return

    def line_of(origin: Origin, *texts: str) -> Origin:
        for offset, line in enumerate(physical):
            if any(t and t in line for t in texts):
                return Origin(origin.file, start + offset)
        return origin

    for i in range(facts, len(out.facts)):
        fact = out.facts[i]
        word = fact.why.split(" in RUN")[0] if fact.why.endswith(" in RUN") else ""
        out.facts[i] = type(fact)(
            fact.key, fact.value, line_of(fact.origin, word, fact.value), fact.why
        )
    for i in range(skipped, len(out.skipped)):
        item = out.skipped[i]
        out.skipped[i] = type(item)(
            line_of(item.origin, item.text.split()[-1]), item.text, item.reason
        )


def _instructions(text: str) -> Iterator[tuple[int, str, str, list[str]]]:
    """(line, INSTRUCTION, argument, its physical lines) with continuations joined; comment lines
    inside are skipped."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        start = index + 1
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [line]
        while parts[-1].rstrip().endswith("\\") and index < len(lines):
            parts[-1] = parts[-1].rstrip()[:-1]
            following = lines[index]
            index += 1
            if following.lstrip().startswith("#"):
                parts.append("\\")  # a comment inside a continued instruction: keep continuing
                continue
            parts.append(following)
        joined = " ".join(p.strip() for p in parts if p.strip() != "\\")
        match = _INSTRUCTION.match(joined)
        if match:
            yield start, match.group(1).upper(), match.group(2).strip(), lines[start - 1 : index]


def _define(argument: str, variables: dict[str, str], instruction: str) -> None:
    for item in re.findall(r"""([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|\S*)""", argument):
        variables.setdefault(item[0], item[1].strip("\"'"))  # a build-arg default; first wins
    if instruction == "ENV" and "=" not in argument:  # legacy `ENV NAME value`
        name, _, value = argument.partition(" ")
        variables.setdefault(name, value.strip())


def _substitute(text: str, variables: dict[str, str]) -> str:
    return _VARIABLE.sub(
        lambda m: variables.get(m.group(1), m.group(2) if m.group(2) is not None else m.group(0)),
        text,
    )


def _from(argument: str, origin: Origin, out: SourceFacts) -> None:
    words = [w for w in argument.split() if not w.startswith("--platform")]
    image = words[0] if words else ""
    match = _NVIDIA_CUDA.match(image)
    if match:
        out.add(CUDA, f"{match.group(1)}.{match.group(2)}", origin, f"FROM {image}")
        return
    match = _PYTORCH.match(image)
    if match:
        out.add(CUDA, f"{match.group(2)}.{match.group(3)}", origin, f"FROM {image}")
        out.add(PIP, f"torch=={match.group(1)}", origin, f"FROM {image}")
        return
    match = _PYTHON_IMAGE.match(image)
    if match:
        out.add(PYTHON, match.group(1), origin, f"FROM {image}")
    elif "$" in image:
        out.skip(origin, f"FROM {image}", "the image name uses a variable with no default")


def _run(command: str, origin: Origin, out: SourceFacts) -> list[tuple[str, Origin]]:
    includes = []
    for version in dict.fromkeys(_PYTHON_WORD.findall(command)):
        out.add(PYTHON, version, origin, f"python{version} in RUN")
    for words in split_command(command):
        words = _strip_prefix(words)
        pip_at = _pip_install_at(words)
        if pip_at is not None:
            includes += pip_arguments(words[pip_at:], origin, out)
            continue
        if (
            len(words) >= 2
            and words[0] in ("conda", "mamba", "micromamba")
            and words[1] == "install"
        ):
            _conda_install(words[2:], origin, out)
    return includes


def _strip_prefix(words: list[str]) -> list[str]:
    while words and (words[0] in ("sudo", "env", "exec") or re.match(r"^[A-Za-z_]+=", words[0])):
        words = words[1:]
    return words


def _pip_install_at(words: list[str]) -> int | None:
    """The index after `pip install` / `python -m pip install` / `uv pip install`, or None."""
    for i, word in enumerate(words[:6]):
        if word == "install" and i >= 1 and re.fullmatch(r"pip(3(\.\d+)?)?", words[i - 1]):
            return i + 1
    return None


_CONDA_VALUE = {"-c", "--channel", "-n", "--name", "-p", "--prefix"}


def _conda_install(words: list[str], origin: Origin, out: SourceFacts) -> None:
    while words:
        word = words.pop(0)
        if word in _CONDA_VALUE:
            value = words.pop(0) if words else ""
            if word in ("-c", "--channel"):
                out.add(CHANNEL, value, origin, f"conda install {word} {value}")
            continue
        if word.startswith("-"):
            continue  # -y, --yes, --quiet, --freeze-installed: how, not what
        conda_spec(word, origin, out)
    return None
