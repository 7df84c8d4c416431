"""Read the files `lockguard init --from` adopts: requirements.txt/.in, pyproject.toml, a conda
environment.yml, Dockerfiles. The kind comes from the file name; the parsing is pure
(lockguard.adopt); this module reads the files and follows `-r` includes (relative to the file that
names them)."""

from __future__ import annotations

from pathlib import Path

from lockguard.adopt.conda_env import parse_environment_yml
from lockguard.adopt.dockerfile import parse_dockerfile
from lockguard.adopt.facts import Origin, SourceFacts
from lockguard.adopt.pyproject import parse_pyproject
from lockguard.adopt.requirements_file import parse_requirements_text
from lockguard.errors import InputError
from lockguard.io.read import REPO_FILE_LIMIT, read_text

KINDS = (
    "requirements*.txt / *.in, pyproject.toml, environment.yml / *.yaml, Dockerfile / *.dockerfile"
)
MAX_INCLUDE_DEPTH = 10


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name == "pyproject.toml":
        return "pyproject"
    if name.endswith((".yml", ".yaml")):
        return "environment"
    if "dockerfile" in name or "containerfile" in name:
        return "dockerfile"
    if name.endswith((".txt", ".in")) or name.startswith("requirements"):
        return "requirements"
    return None


def read_sources(paths: list[Path]) -> SourceFacts:
    out = SourceFacts()
    seen: set[Path] = set()
    for path in paths:
        kind = kind_of(path)
        if kind is None:
            raise InputError(
                f"{path}: cannot tell what kind of file this is",
                file=str(path),
                hint=f"--from reads {KINDS}",
            )
        _read(path, kind, out, seen, depth=0, named_by=None)
    return out


def _read(
    path: Path, kind: str, out: SourceFacts, seen: set[Path], *, depth: int, named_by: Origin | None
) -> None:
    resolved = path.resolve()
    if resolved in seen:
        return
    seen.add(resolved)
    try:
        # regular, bounded, UTF-8 (or exit 2)
        text = read_text(path, what="file", limit=REPO_FILE_LIMIT)
    except FileNotFoundError:
        if named_by is not None:  # an include that is not here: say so, keep the rest
            out.skip(named_by, f"-r {path}", "the included file does not exist")
            return
        raise InputError(
            f"{path} does not exist", file=str(path), hint=f"--from reads {KINDS}"
        ) from None
    parser = {
        "requirements": parse_requirements_text,
        "pyproject": parse_pyproject,
        "environment": parse_environment_yml,
        "dockerfile": parse_dockerfile,
    }[kind]
    facts, includes = parser(text, str(path))
    out.extend(facts)
    for include, origin in includes:
        if depth >= MAX_INCLUDE_DEPTH:
            out.skip(origin, f"-r {include}", f"includes nested deeper than {MAX_INCLUDE_DEPTH}")
            continue
        target = path.parent / include
        if (
            Path(include).is_absolute()
            and not target.exists()
            and (path.parent / Path(include).name).is_file()
        ):
            # COPY requirements.txt /tmp/ ... pip install -r /tmp/...
            target = path.parent / Path(include).name
            out.notes.append(
                f"{origin}: read {target} for {include} (the file next to {path.name})"
            )
        _read(target, "requirements", out, seen, depth=depth + 1, named_by=origin)
