"""The finding codes live in one registry (lockguard/model/codes.py): README.md's code tables list
exactly its codes, each with its meaning, and the package spells no code as a literal elsewhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lockguard.model import codes
from lockguard.model.finding import ERROR, INFO, WARNING

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lockguard"
CODE = re.compile(r"LG\d{3}")
ROW = re.compile(r"^\|\s*(LG\d{3})\s*\|\s*(.+?)\s*\|\s*$")


def readme_rows() -> list[tuple[str, str, int]]:
    """(code, finding, line) of every table row of README.md whose first cell is one code."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    return [
        (m.group(1), m.group(2), n) for n, line in enumerate(lines, 1) if (m := ROW.match(line))
    ]


def test_the_registry_is_keyed_by_each_code_once():
    assert len(codes.REGISTRY) >= 60
    for key, entry in codes.REGISTRY.items():
        assert key == entry.code and CODE.fullmatch(key)
        assert entry.severity in (ERROR, WARNING, INFO)
        assert entry.title and "\n" not in entry.title
    constants = [v for v in vars(codes).values() if isinstance(v, codes.FindingCode)]
    assert len(constants) == len(codes.REGISTRY)  # no code given twice


def test_the_readme_tables_list_exactly_the_registered_codes():
    rows = readme_rows()
    listed = [code for code, _finding, _line in rows]
    missing, unknown = (
        sorted(set(codes.REGISTRY) - set(listed)),
        sorted(set(listed) - set(codes.REGISTRY)),
    )
    assert not missing and not unknown, (
        f"README.md lacks rows for {missing}; lists unregistered {unknown}"
    )
    assert len(listed) == len(set(listed)), "a code has two rows in README.md"


def test_each_readme_row_says_what_the_registry_says():
    """A row's text begins with the registry's title; what follows only adds detail."""
    for code, finding, line in readme_rows():
        title = codes.REGISTRY[code].title
        assert finding.startswith(title) and not finding[len(title) :][:1].isalnum(), (
            f"README.md:{line}: {code} reads {finding!r}, the registry says {title!r}"
        )


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def literal_codes(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant that spells a code, docstrings aside."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and CODE.search(node.value)
    ]


def test_the_scan_finds_a_literal_code_in_a_call_and_an_f_string_but_not_a_docstring():
    source = '"""LG102 in a docstring."""\nFinding("LG102", ERROR, f"LG128: {name}")\n'
    assert sorted(text for _line, text in literal_codes(source)) == ["LG102", "LG128: "]


def test_no_code_is_written_as_a_literal_outside_the_registry():
    found = [
        f"{path.relative_to(REPO)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "model" / "codes.py"
        for line, text in literal_codes(path.read_text(encoding="utf-8"))
    ]
    assert not found, "use the constant of lockguard/model/codes.py:\n" + "\n".join(found)


def test_every_code_the_package_mentions_is_registered():
    """Comments and docstrings may name codes; each must be a real one."""
    unknown = {
        f"{path.relative_to(REPO)}: {code}"
        for path in PACKAGE.rglob("*.py")
        for code in CODE.findall(path.read_text(encoding="utf-8"))
        if code not in codes.REGISTRY
    }
    assert not unknown, sorted(unknown)
