"""Requirement files (requirements.txt / .in, pip-tools style) and pip's command-line arguments.

The requirement grammar is packaging's (PEP 508); pip's own options are few and line-based, so a
small parser reads them: index options become `indexes`/`pytorch-index` (a PyTorch index URL
names the CUDA variant too), `-r` includes are followed by the reader, every other option is listed
as skipped with the reason, never dropped silently.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement

from lockguard.adopt.facts import CUDA, EXTRA_INDEX, INDEX, PIP, PYTORCH_INDEX, Origin, SourceFacts
from lockguard.model.intent import DEFAULT_PYTORCH_INDEX
from lockguard.model.names import INSTALLER_TOOLS, canonical_name
from lockguard.model.versions import CudaVersion

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
_PYTORCH_URL = re.compile(r"^(?P<base>https?://\S+?/whl)/(?P<variant>cu\d{2,3}|cpu)/?$")
_LOCAL_VARIANT = re.compile(r"\+(cu\d{2,3}|cpu)\b")
# options that change how pip installs, not what: nothing to carry over, nothing lost
HARMLESS = {
    "--no-cache-dir",
    "-U",
    "--upgrade",
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "--user",
    "--disable-pip-version-check",
    "--no-input",
    "--break-system-packages",
    "--force-reinstall",
    "--ignore-installed",
    "--no-warn-script-location",
    "--compile",
    "--no-compile",
    "--require-hashes",
}
HARMLESS_WITH_VALUE = {
    "--progress-bar",
    "--root-user-action",
    "--timeout",
    "--retries",
    "--cache-dir",
    "--trusted-host",
    "--upgrade-strategy",
}
INCLUDES = {"-r", "--requirement"}
WITH_VALUE = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-c",
    "--constraint",
    "-f",
    "--find-links",
    "-e",
    "--editable",
    *INCLUDES,
    *HARMLESS_WITH_VALUE,
    "--no-binary",
    "--only-binary",
    "--platform",
    "--python-version",
    "--target",
    "-t",
    "--prefix",
    "--root",
    "--hash",
}


def parse_requirements_text(text: str, file: str) -> tuple[SourceFacts, list[tuple[str, Origin]]]:
    """Facts of a requirements file, and the files it includes with `-r` (relative to it)."""
    out = SourceFacts()
    includes: list[tuple[str, Origin]] = []
    for number, line in _logical_lines(text):
        origin = Origin(file, number)
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            out.skip(origin, line, f"cannot split the line: {exc}")
            continue
        if not words:
            continue
        if words[0].startswith("-"):
            includes += pip_arguments(words, origin, out, requirements_file=True)
        else:
            requirement(" ".join(w for w in words if not w.startswith("--hash")), origin, out)
    return out, includes


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined and comments removed."""
    start, parts = None, []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if start is None:
            start = number
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        parts.append(line)
        joined = " ".join(p.strip() for p in parts).strip()
        if joined:
            yield start, joined
        start, parts = None, []
    if parts and " ".join(parts).strip():
        yield start or 1, " ".join(p.strip() for p in parts).strip()


def pip_arguments(
    words: list[str], origin: Origin, out: SourceFacts, *, requirements_file: bool = False
) -> list[tuple[str, Origin]]:
    """The arguments of `pip install` (or one option line of a requirements file)."""
    includes = []
    words = list(words)
    while words:
        word = words.pop(0)
        option, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if (
            option.startswith("-")
            and len(option) > 2
            and not option.startswith("--")
            and option[:2] in WITH_VALUE
        ):
            option, inline = option[:2], option[2:]  # -rfile, -ihttps://...
        if not option.startswith("-"):
            requirement(word, origin, out)
            continue
        value = inline or (words.pop(0) if option in WITH_VALUE and words else "")
        if option in HARMLESS or option in HARMLESS_WITH_VALUE:
            continue
        if option in INCLUDES:
            includes.append((value, origin))
        elif option in ("-i", "--index-url", "--extra-index-url"):
            index_option(option, value, origin, out)
        elif option in ("-e", "--editable"):
            out.skip(
                origin,
                f"{option} {value}",
                "an editable install of local code: install it yourself after the lock",
            )
        elif option in ("-c", "--constraint"):
            out.skip(
                origin,
                f"{option} {value}",
                "constraints files are not carried over: add the pins you need to pip = [...]",
            )
        elif option in ("-f", "--find-links"):
            out.skip(
                origin,
                f"{option} {value}",
                "find-links pages are not indexes: use a PEP 503 index URL in indexes",
            )
        else:
            out.skip(
                origin, f"{option} {value}".strip(), "a pip option lockguard does not carry over"
            )
    return includes


def index_option(option: str, url: str, origin: Origin, out: SourceFacts) -> None:
    url = url.rstrip("/")
    match = _PYTORCH_URL.match(url)
    if match:
        variant = match.group("variant")
        out.add(CUDA, "none" if variant == "cpu" else _cuda_of(variant), origin, f"{option} {url}")
        if match.group("base") != DEFAULT_PYTORCH_INDEX:
            out.add(PYTORCH_INDEX, match.group("base"), origin, f"{option} {url}")
        return
    if not re.match(r"^(https?|file)://", url):
        out.skip(origin, f"{option} {url}", "not an http(s) or file URL")
        return
    out.add(INDEX if option in ("-i", "--index-url") else EXTRA_INDEX, url, origin, option)


def _cuda_of(variant: str) -> str:
    return str(CudaVersion.from_variant(variant))


def requirement(text: str, origin: Origin, out: SourceFacts) -> None:
    """One requirement, kept as written (a torch +cuXYZ label becomes a CUDA fact)."""
    text = " ".join(text.split())
    if (
        text in (".", "..")
        or text.startswith(("./", "../", "/", "file:"))
        or re.match(r"^[a-z+]+://", text)
    ):
        out.skip(
            origin,
            text,
            "a local path or URL, not an index package: install it yourself after the lock",
        )
        return
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        out.skip(origin, text, f"not a PEP 508 requirement: {str(exc).splitlines()[0]}")
        return
    if req.url:
        out.skip(origin, text, "a direct URL reference: lockguard locks packages from indexes")
        return
    name = canonical_name(req.name)
    if name in INSTALLER_TOOLS and not req.specifier:
        out.notes.append(f"{origin}: {text} left out (the environment's own installer tools)")
        return
    if name in TORCH_FAMILY:
        label = _LOCAL_VARIANT.search(text)
        if label:
            variant = label.group(1)
            cuda = "none" if variant == "cpu" else _cuda_of(variant)
            out.add(CUDA, cuda, origin, f"{text}")
            text = _LOCAL_VARIANT.sub("", text)
            out.notes.append(
                f'{origin}: {req.name}\'s +{variant} label became cuda = "{cuda}" '
                "(lockguard picks the variant from cuda)"
            )
    out.add(PIP, text, origin)


def split_command(command: str) -> list[list[str]]:
    """A shell command split into its simple commands at &&, ||, ; and | (for Dockerfile RUN)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:
        return []
    commands: list[list[str]] = []
    current: list[str] = []
    for word in words:
        if word and set(word) <= set(";&|"):
            if current:
                commands.append(current)
            current = []
        else:
            current.append(word)
    if current:
        commands.append(current)
    return commands
