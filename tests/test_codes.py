"""The finding codes live in one registry (lockguard/model/codes.py): README.md's code tables list
exactly its codes, each with its meaning, and the package spells no code as a literal elsewhere.
Every producer gives a code the severity the registry says (or one of the cases it names)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


# -- the registry's severity is the one every producer gives ---------------------------------------

SEVERITY_NAMES = {"ERROR": ERROR, "WARNING": WARNING, "INFO": INFO}


def producers(source: str) -> list[tuple[int, str, str, str | None]]:
    """(line, how, code, severity) of each call that names a code and a severity: `f(codes.X.code,
    [title,] SEVERITY, ...)` (Finding, doctor's bad) gives how="literal" with the severity it
    writes; `codes.X.finding(..., severity=S)` and `flag(codes.X, ..., severity=S)` give
    how="registry" with S (None: the registry's own)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        explicit = next((k.value for k in node.keywords if k.arg == "severity"), None)
        chosen = (
            SEVERITY_NAMES.get(explicit.id)
            if isinstance(explicit, ast.Name)
            else explicit.value
            if isinstance(explicit, ast.Constant)
            else None
        )
        if isinstance(func, ast.Attribute) and func.attr == "finding":
            if _code_constant(func.value):
                out.append((node.lineno, "registry", _code_constant(func.value), chosen))
            continue
        for i, arg in enumerate(node.args):
            constant = _code_constant(arg.value) if isinstance(arg, ast.Attribute) else None
            if constant and arg.attr == "code":
                given = [
                    SEVERITY_NAMES[a.id]
                    for a in node.args[i + 1 : i + 3]
                    if isinstance(a, ast.Name) and a.id in SEVERITY_NAMES
                ]
                if given:
                    out.append((node.lineno, "literal", constant, given[0]))
            elif _code_constant(arg) and isinstance(func, ast.Name) and func.id == "flag":
                out.append((node.lineno, "registry", _code_constant(arg), chosen))
    return out


def _code_constant(node: ast.AST) -> str | None:
    """The registry code of `codes.NAME`, else None."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "codes"
        and isinstance(getattr(codes, node.attr, None), codes.FindingCode)
    ):
        return getattr(codes, node.attr).code
    return None


def _all_producers():
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, how, code, severity in producers(path.read_text(encoding="utf-8")):
            yield f"{path.relative_to(REPO)}:{line}", how, code, severity


def test_finding_takes_the_registry_severity_and_only_the_cases_it_names():
    made = codes.LOADER_PATH_COPY.finding("m", "h", "/f", 3)
    assert (made.code, made.severity, made.message, made.hint, made.file, made.line) == (
        "LG217",
        WARNING,
        "m",
        "h",
        "/f",
        3,
    )
    assert codes.LIBRARY_OUTSIDE_WHEELS.finding("m", severity=ERROR).severity == ERROR
    with pytest.raises(ValueError, match="LG217 is warning in the registry, not error"):
        codes.LOADER_PATH_COPY.finding("m", severity=ERROR)
    for entry in codes.REGISTRY.values():
        assert entry.severity not in entry.cases and set(entry.cases) <= {ERROR, WARNING, INFO}


def test_the_scan_finds_both_kinds_of_producer():
    source = (
        "Finding(codes.LOADER_PATH_COPY.code, ERROR, 'm')\n"
        "bad(codes.CUDNN_MISMATCH.code, 't', WARNING, 'm', 'h')\n"
        "codes.TWO_DIST_INFOS.finding('m', 'h')\n"
        "flag(codes.LIBRARY_OUTSIDE_WHEELS, 't', 'm', 'h', severity=ERROR)\n"
    )
    assert producers(source) == [
        (1, "literal", "LG217", ERROR),
        (2, "literal", "LG314", WARNING),
        (3, "registry", "LG206", None),
        (4, "registry", "LG302", ERROR),
    ]


def test_every_producer_gives_a_severity_the_registry_names():
    """A code means one severity in every command (issue 30: a foreign libnccl was a warning to
    clean-install, ok to doctor and an error to check --env); a rule may choose another only
    where the registry names that case."""
    wrong = [
        f"{where}: {code} as {severity}; the registry says "
        f"{' or '.join(codes.REGISTRY[code].severities)}"
        for where, _how, code, severity in _all_producers()
        if severity is not None and severity not in codes.REGISTRY[code].severities
    ]
    assert not wrong, "\n".join(wrong)


def test_every_finding_is_built_through_the_registry():
    """No producer writes a severity next to a code: `CODE.finding(...)` (doctor: `flag(CODE,
    ...)`) takes it from the registry, so one code means one severity everywhere."""
    literal = [
        f"{where}: {code}" for where, how, code, _severity in _all_producers() if how == "literal"
    ]
    assert not literal, "build these with CODE.finding(...) / flag(CODE, ...):\n" + "\n".join(
        literal
    )
    built = {code for _where, how, code, _severity in _all_producers() if how == "registry"}
    assert len(built) > 50  # the scan still sees the producers
