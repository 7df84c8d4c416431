"""pyproject.toml: `[project] dependencies` become pip requirements, `requires-python` bounds the
Python (it names no single version, so it only decides when nothing else does)."""

from __future__ import annotations

from lockguard.adopt.facts import REQUIRES_PYTHON, Origin, SourceFacts
from lockguard.adopt.requirements_file import requirement
from lockguard.model import toml_read
from lockguard.model.toml_lines import TomlLines


def parse_pyproject(text: str, file: str) -> tuple[SourceFacts, list[tuple[str, Origin]]]:
    out = SourceFacts()
    try:
        data = toml_read.loads(text)
    except toml_read.TOMLDecodeError as exc:
        out.skip(Origin(file), "(the whole file)", f"not valid TOML: {exc}")
        return out, []
    lines = TomlLines(text)
    project = data.get("project")
    if not isinstance(project, dict):
        out.skip(Origin(file), "(the whole file)", "it has no [project] table")
        return out, []
    dependencies = project.get("dependencies", [])
    if "dependencies" in project.get("dynamic", []):
        out.skip(
            Origin(file, lines.line_of("project", "dynamic")),
            'dynamic = ["dependencies"]',
            "the dependencies are computed by the build backend: list them in a requirements file",
        )
    for item in dependencies if isinstance(dependencies, list) else []:
        if isinstance(item, str):
            requirement(
                item, Origin(file, lines.line_of("project", "dependencies", element=item)), out
            )
    requires_python = project.get("requires-python")
    if isinstance(requires_python, str):
        out.add(
            REQUIRES_PYTHON,
            requires_python,
            Origin(file, lines.line_of("project", "requires-python")),
            f'requires-python = "{requires_python}"',
        )
    for group in sorted(project.get("optional-dependencies") or {}):
        out.notes.append(
            f"{file}: the optional dependencies [{group}] are not carried over "
            "(add the ones the environment needs to pip = [...])"
        )
    return out, []
