"""The layering of docs/architecture.md, read from the code's own imports (ast; module-level and
function-level imports alike, TYPE_CHECKING ones included):

- dependencies point one way: cli -> app -> core (model, knowledge, resolve, check, lockfiles,
  install, doctor, fleet, adopt) and io; io and the core never import app or cli; app never
  imports cli; the cli reaches io only through app;
- no two lockguard modules import each other, directly or through others (no import cycle);
- only lockguard.io touches the outside world: the pure packages import neither io nor the
  clients it wraps, and do no file or environment I/O of their own (no open(), shutil, os beyond
  its path-text functions, no file-system method of a Path).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lockguard"
PURE = [
    "model",
    "knowledge",
    "resolve",
    "check",
    "install",
    "lockfiles",
    "doctor",
    "fleet",
    "adopt",
]
OUTSIDE_WORLD = (
    "lockguard.io",
    "httpx",
    "rattler",
    "pynvml",
    "subprocess",
    "socket",
    "urllib.request",
    "shutil",
    "tempfile",
    "glob",
    "fcntl",
    "io",
)
# the doctor's probe is a script run by the target interpreter (stdlib only), not an import
SCRIPTS = {PACKAGE / "doctor" / "probe.py"}
# os.path's functions that only read the text of a path (no file system, no working folder)
PATH_TEXT = {
    "join",
    "dirname",
    "basename",
    "split",
    "splitext",
    "normpath",
    "isabs",
    "commonpath",
    "sep",
}
OS_TEXT = {"path", "sep", "fspath", "PathLike"}
# pathlib's methods that touch the file system (a Path held as a value is fine)
PATH_IO = {
    "exists",
    "is_file",
    "is_dir",
    "is_symlink",
    "resolve",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "iterdir",
    "glob",
    "rglob",
    "mkdir",
    "unlink",
    "rmdir",
    "touch",
    "samefile",
    "lstat",
    "expanduser",
    "absolute",
    "chmod",
    "symlink_to",
    "readlink",
    "cwd",
    "home",
    "stat",
}
LAYERS = {"core": set(PURE) | {"errors"}, "io": {"io"}, "app": {"app"}, "cli": {"cli", "__main__"}}
# who may import whom, by layer (a layer may always import itself)
ALLOWED = {"cli": {"app", "core"}, "app": {"core", "io"}, "io": {"core"}, "core": set()}
# the cli reaching io without app: none
CLI_TO_IO: set[str] = set()


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    """lockguard.io.env.quarantine for <package>/io/env/quarantine.py (`package`: the lockguard
    folder)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package_root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, relative ones made absolute; `from a import b`
    also gives a.b (b may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = _module_name(path, package_root) if path.is_relative_to(package_root) else path.stem
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for _line, imported in _imports(path, package):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _layer(module: str) -> str | None:
    top = module.split(".")[1] if module.count(".") else "(lockguard)"
    return next((layer for layer, packages in LAYERS.items() if top in packages), None)


# -- no cycle -------------------------------------------------------------------------------------


def test_no_two_modules_import_each_other():
    found = cycles(import_graph(PACKAGE))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_a_cycle_is_found(tmp_path):
    """Function-level and relative imports count; a cycle through three modules is one circle."""
    package = tmp_path / "lockguard"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("from . import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from lockguard.sub.c import g\n")
    (package / "sub" / "c.py").write_text("from lockguard.sub import a\n")
    # imports into the circle: not in it
    (package / "sub" / "d.py").write_text("import lockguard.sub.a\n")
    assert cycles(import_graph(package)) == [
        ["lockguard.sub.a", "lockguard.sub.b", "lockguard.sub.c"]
    ]


# -- layers ---------------------------------------------------------------------------------------


def test_dependencies_point_from_cli_to_app_to_core_and_io():
    graph = import_graph(PACKAGE)
    offenders = []
    for module, targets in sorted(graph.items()):
        layer = _layer(module)
        for target in sorted(targets):
            other = _layer(target)
            if layer is None or other is None or other == layer:
                continue
            if other not in ALLOWED[layer]:
                offenders.append(f"{module} ({layer}) imports {target} ({other})")
            if layer == "cli" and other == "io" and module not in CLI_TO_IO:
                offenders.append(f"{module} reaches io without app: {target}")
    assert not offenders, "\n".join(offenders)


def test_a_back_arrow_is_found(tmp_path):
    package = tmp_path / "lockguard"
    for folder in ("io", "app", "cli"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "io" / "store.py").write_text(
        "def f():\n    from lockguard.app.session import run\n"
    )
    (package / "app" / "session.py").write_text("from lockguard.io.store import f\n")
    graph = import_graph(package)
    assert (
        _layer("lockguard.io.store") == "io"
        and "lockguard.app.session" in graph["lockguard.io.store"]
    )
    assert "app" not in ALLOWED["io"]


# -- the pure packages do no I/O ------------------------------------------------------------------


def _pure_files() -> list[Path]:
    return [
        p for package in PURE for p in sorted((PACKAGE / package).rglob("*.py")) if p not in SCRIPTS
    ]


def _io_uses(path: Path) -> list[str]:
    """What in the file touches the outside world: open(), os beyond path text, Path's file-system
    methods."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "open"
        ):
            out.append(f"{node.lineno}: open()")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in PATH_IO
            and not (node.func.attr == "resolve" and node.args)
        ):  # resolvelib's Resolver.resolve(requirements)
            out.append(f"{node.lineno}: .{node.func.attr}()")
        elif isinstance(node, ast.Attribute):
            value = node.value
            if isinstance(value, ast.Name) and value.id == "os" and node.attr not in OS_TEXT:
                out.append(f"{node.lineno}: os.{node.attr}")
            elif (
                isinstance(value, ast.Attribute)
                and value.attr == "path"
                and isinstance(value.value, ast.Name)
                and value.value.id == "os"
                and node.attr not in PATH_TEXT
            ):
                out.append(f"{node.lineno}: os.path.{node.attr}")
        elif (
            isinstance(node, ast.ImportFrom) and node.module in ("os", "os.path") and not node.level
        ):
            out += [
                f"{node.lineno}: from {node.module} import {a.name}"
                for a in node.names
                if a.name not in (OS_TEXT | PATH_TEXT)
            ]
    return out


@pytest.mark.parametrize("package", PURE)
def test_pure_packages_do_not_touch_the_outside_world(package):
    offenders = []
    for path in _pure_files():
        if path.relative_to(PACKAGE).parts[0] != package:
            continue
        for line, module in _imports(path):
            if any(module == banned or module.startswith(banned + ".") for banned in OUTSIDE_WORLD):
                offenders.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
        offenders += [f"{path.relative_to(PACKAGE)}:{use}" for use in _io_uses(path)]
    assert not offenders, "\n".join(offenders)


def test_the_check_detects_an_offender(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(p):\n    from lockguard.io.index.http import Http\n    import shutil\n"
        "    p.read_text()\n    open(p)\n    os.path.realpath(p)\n    os.environ.get('X')\n"
        "    return os.path.join('a', 'b'), os.sep\n"
    )
    assert (3, "shutil") in _imports(bad) and (2, "lockguard.io.index.http") in _imports(bad)
    assert _io_uses(bad) == ["4: .read_text()", "5: open()", "6: os.path.realpath", "7: os.environ"]


# each third-party library (and tomllib with its backport) is reached through one adapter module
ADAPTERS = {
    "httpx": "io/index/http.py",
    "rattler": "io/index/conda.py",
    "msgspec": "io/msgspec_adapter.py",
    "pynvml": "io/machine/nvml.py",
    "yaml": "lockfiles/yaml_adapter.py",
    "tomllib": "model/toml_read.py",
    "tomli": "model/toml_read.py",
    "platformdirs": "io/cache/root.py",
    "elftools": "io/env/elf.py",
    "rich": "cli/output.py",
    "uv": "io/env/engines/uv.py",
}


def test_each_library_has_one_adapter_module():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for line, module in _imports(path):
            library = module.split(".")[0]
            if library in ADAPTERS and ADAPTERS[library] != where:
                offenders.append(
                    f"{where}:{line} imports {module} (its adapter: {ADAPTERS[library]})"
                )
    assert not offenders, "\n".join(sorted(set(offenders)))


# children run through io/run.py (bounded, in their own group)
SUBPROCESS_USERS = {"io/run.py"}


def test_children_start_only_through_the_one_runner():
    users = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(module.split(".")[0] == "subprocess" for _line, module in _imports(path))
    }
    assert users <= SUBPROCESS_USERS, sorted(users - SUBPROCESS_USERS)


# the core's inner order (docs/architecture.md): what each core package may import besides itself
CORE_ORDER = {
    "errors": set(),
    "model": {"errors"},
    "knowledge": {"errors", "model"},
    "lockfiles": {"errors", "model", "knowledge"},
    "check": {"errors", "model", "knowledge", "lockfiles"},
    "resolve": {"errors", "model", "knowledge"},
    "install": {"errors", "model", "knowledge", "lockfiles"},
    "doctor": {"errors", "model", "knowledge", "lockfiles", "install"},
    "fleet": {"errors", "model"},  # a leaf: no other core package imports it
    "adopt": {"errors", "model", "lockfiles"},  # a leaf too
}


def core_arrows(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, targets in sorted(graph.items()):
        source = module.split(".")[1] if module.count(".") else None
        if source not in CORE_ORDER:
            continue
        for target in sorted(targets):
            top = target.split(".")[1] if target.count(".") else None
            if top in CORE_ORDER and top != source and top not in CORE_ORDER[source]:
                wrong.append(f"{module} ({source}) imports {target} ({top})")
    return wrong


def test_the_core_keeps_its_inner_order():
    """resolve/ imports neither check/ nor lockfiles/ (resolve's refusal gate lives in check/);
    install/ never reaches doctor/; fleet/ and adopt/ are leaves."""
    assert not core_arrows(import_graph(PACKAGE)), "\n".join(core_arrows(import_graph(PACKAGE)))


def test_an_arrow_against_the_core_order_is_found():
    graph = {
        "lockguard.resolve.x": {"lockguard.check.gate"},
        "lockguard.check.y": {"lockguard.model.z"},
    }
    assert core_arrows(graph) == [
        "lockguard.resolve.x (resolve) imports lockguard.check.gate (check)"
    ]


# -- commands make one call (issue 34 §1) ----------------------------------------------------------
# A click command parses its options, calls its app/ session, and renders the outcome: its body
# (docstring excluded) stays short and it imports few names from lockguard.app. Names imported
# under `if TYPE_CHECKING:` are annotations, not calls, and are not counted.
COMMAND_LINES = 40
COMMAND_APP_NAMES = 2
# still conducting their sessions themselves: remove each name once its command is converted
NOT_YET_CONVERTED: set[str] = set()  # every command makes one call now


def _is_type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node, less the bodies of `if TYPE_CHECKING:` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def command_sizes(path: Path) -> dict[str, int]:
    """The click commands of a cli module (functions decorated with `...command(...)`) and the
    lines of each body, its docstring excluded."""
    sizes = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if not any("command" in ast.unparse(d) for d in node.decorator_list):
            continue
        body = node.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        end = body[-1].end_lineno or body[-1].lineno
        sizes[node.name] = end - body[0].lineno + 1
    return sizes


def app_names(path: Path) -> set[str]:
    """The names a cli module imports from lockguard.app (a module imported whole is one name),
    at run time."""
    names = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lockguard.app"):
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("lockguard.app")}
    return names


def oversized_commands(cli: Path) -> list[str]:
    wrong = []
    for path in sorted(cli.glob("*_cmd.py")):
        if path.name in NOT_YET_CONVERTED:
            continue
        for name, lines in command_sizes(path).items():
            if lines > COMMAND_LINES:
                wrong.append(f"{path.name}: {name}'s body is {lines} lines (> {COMMAND_LINES})")
        names = app_names(path)
        if len(names) > COMMAND_APP_NAMES:
            wrong.append(
                f"{path.name} imports {len(names)} names from lockguard.app "
                f"(> {COMMAND_APP_NAMES}): {', '.join(sorted(names))}"
            )
    return wrong


def test_each_command_makes_one_call_to_its_session():
    """≤ 40 lines per command body and ≤ 2 app names per cli module: the sequence lives in the
    session (app/*), which tests call without click (tests/test_sessions.py)."""
    assert not oversized_commands(PACKAGE / "cli"), "\n".join(oversized_commands(PACKAGE / "cli"))


def test_the_not_yet_converted_commands_still_exist_and_still_need_the_exception():
    """The allow-list shrinks: a converted command leaves it (this fails until it does)."""
    for name in NOT_YET_CONVERTED:
        path = PACKAGE / "cli" / name
        assert path.is_file(), f"{name} is gone: remove it from NOT_YET_CONVERTED"
        too_big = any(lines > COMMAND_LINES for lines in command_sizes(path).values())
        assert too_big or len(app_names(path)) > COMMAND_APP_NAMES, (
            f"{name} keeps the rule now: remove it from NOT_YET_CONVERTED"
        )


def test_a_command_that_conducts_its_session_is_found(tmp_path):
    cli = tmp_path / "cli"
    cli.mkdir()
    body = "\n".join(f"    step{i}()" for i in range(41))
    (cli / "long_cmd.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from lockguard.app.a import one, two\n"
        "from lockguard.app import b\n"
        "if TYPE_CHECKING:\n"
        "    from lockguard.app.a import Outcome\n"
        "@click.command()\n"
        f'def long():\n    """Doc."""\n{body}\n'
    )
    (cli / "short_cmd.py").write_text(
        "from lockguard.app import session\n"
        "@group.command()\n"
        "def short():\n    return session.run()\n"
    )
    assert app_names(cli / "long_cmd.py") == {"one", "two", "b"}
    assert command_sizes(cli / "long_cmd.py") == {"long": 41}
    assert oversized_commands(cli) == [
        "long_cmd.py: long's body is 41 lines (> 40)",
        "long_cmd.py imports 3 names from lockguard.app (> 2): b, one, two",
    ]


# -- one registry of lock formats -----------------------------------------------------------

# the kinds of lockfiles/formats.py's FORMATS, as string literals (the test does not import them:
# a kind renamed there must show up here as a failure, not pass silently)
FORMAT_KINDS = {"requirements", "environment", "conda-lock", "pylock"}
# the modules that may tell the formats apart by their kind
FORMAT_MODULES = {
    PACKAGE / "lockfiles" / "formats.py",
    PACKAGE
    / "model"
    / "lock_names.py",  # the naming half of the registry (model may not import it)
}
# (file, the compared or keyed text) -> why it is not a lock format dispatch
FORMAT_KIND_ALLOWED = {
    ("install/duplicates.py", "origins[d.site].kind != 'environment'"): (
        "an installed copy's origin (the environment's own site-packages), not a lock format"
    ),
    ("model/intent.py", "outputs"): (
        "the intent's canonical [outputs] for its hash: the keys of hashes already written"
    ),
}


def _is_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in FORMAT_KINDS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_kind(e) for e in node.elts)
    return False


def format_dispatch(path: Path, source: str) -> list[tuple[int, str]]:
    """(line, text) of each comparison with a lock format's kind (`kind == "pylock"`,
    `kind in ("requirements", "environment")`) and each table keyed by two kinds or more."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(
            _is_kind(side) for side in [node.left, *node.comparators]
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            keys = [k for k in node.value.keys if k is not None and _is_kind(k)]
            if len(keys) >= 2:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                found.append((node.lineno, ast.unparse(target)))
    return sorted(found)


def test_only_the_format_registry_tells_lock_formats_apart():
    """A new `kind == "..."` (or a table by kind) outside lockfiles/formats.py is a format that
    the registry does not know about: give LockFormat what it needs instead."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in FORMAT_MODULES:
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        for line, text in format_dispatch(path, path.read_text(encoding="utf-8")):
            if (relative, text) not in FORMAT_KIND_ALLOWED:
                wrong.append(f"lockguard/{relative}:{line}: {text}")
    assert not wrong, (
        "dispatch on a lock format's kind outside lockfiles/formats.py:\n" + "\n".join(wrong)
    )


def test_a_new_kind_dispatch_is_found():
    source = (
        'if lock.kind == "pylock":\n    pass\n'
        'if kind not in ("requirements", "environment"):\n    pass\n'
        'READERS = {"requirements": 1, "conda-lock": 2}\n'
        'if kind == "torch":\n    pass\n'
    )
    assert format_dispatch(Path("x.py"), source) == [
        (1, "lock.kind == 'pylock'"),
        (3, "kind not in ('requirements', 'environment')"),
        (5, "READERS"),
    ]


def test_the_allowed_dispatch_is_still_there():
    """An allow-list entry whose code went away is removed with it."""
    for relative, text in FORMAT_KIND_ALLOWED:
        path = PACKAGE / relative
        assert text in [t for _l, t in format_dispatch(path, path.read_text(encoding="utf-8"))]


# issue 34: size is counted in statements (AST), not lines: `ruff format` changes lines, not this
MAX_STATEMENTS = 500


def test_no_module_is_over_500_statements():
    sizes = {
        path.relative_to(PACKAGE).as_posix(): sum(
            isinstance(node, ast.stmt) for node in ast.walk(ast.parse(path.read_text()))
        )
        for path in PACKAGE.rglob("*.py")
    }
    over = {where: size for where, size in sizes.items() if size > MAX_STATEMENTS}
    assert not over, over
