"""Plain `lockguard check` without click: the same command, parsed by hand because it runs on every
commit (the click definition in check_cmd.py handles --help, --env, --python and -v)."""

from __future__ import annotations

import os
import sys

from lockguard.cli.output import Ui

FORMATS = ("text", "json", "github")


def fast_check_options(argv: list[str]) -> dict | None:
    """The options of a plain check, or None when the full CLI must handle the command line."""
    if not argv or argv[0] != "check":
        return None
    options: dict = {"intent_path": None, "fmt": "text", "strict": False, "use_cache": True, "wait": True}
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "--strict":
            options["strict"] = True
        elif arg == "--no-wait":
            options["wait"] = False
        elif arg == "--no-cache":
            options["use_cache"] = False
        elif arg == "--json":  # the spelling every other command uses
            options["fmt"] = "json"
        elif arg in ("--intent", "--format") and args:
            value = args.pop(0)
            if arg == "--format" and value not in FORMATS or not value:
                return None  # let click report the bad value (an empty --intent is a folder: ".")
            options["intent_path" if arg == "--intent" else "fmt"] = value
        elif arg.startswith(("--intent=", "--format=")):
            key, _, value = arg.partition("=")
            if key == "--format" and value not in FORMATS or not value:
                return None
            options["intent_path" if key == "--intent" else "fmt"] = value
        else:
            return None  # --env, --python, --help, -v, ...: the click command
    return options


def run_check(ui: Ui, *, intent_path: str | None, fmt: str, strict: bool, use_cache: bool = True,
              wait: bool = True) -> int:
    """The check, with the project's lock set held shared (a resolve writing it is waited for,
    or with `wait` False refused: exit 2), so that it never reads a half-written set."""
    from lockguard.io.project.lock_set import LockSet

    ui.command = "check"
    ui.json_mode = fmt == "json"
    with LockSet(lock_folder(intent_path), exclusive=False, command="check", wait=wait, on_wait=ui.info, warn=ui.warn):
        return _checked(ui, intent_path=intent_path, fmt=fmt, strict=strict, use_cache=use_cache)


def lock_folder(intent_path) -> str:
    """The folder whose lock set a check of this intent reads: the folder of the intent file, as
    resolve locks it (Intent.source.root: the resolved file's folder)."""
    import os

    if intent_path is None:
        intent_path = "lockguard.toml" if os.path.lexists("lockguard.toml") else "pyproject.toml"
    return os.path.dirname(os.path.realpath(intent_path))


def _checked(ui: Ui, *, intent_path: str | None, fmt: str, strict: bool, use_cache: bool) -> int:
    cache = None
    if use_cache:
        from lockguard.io.project.check_cache import CheckCache, find_intent_path

        found = find_intent_path(intent_path)
        if found is not None:
            # the output names files relative to the folder it runs in: that folder is part of the key
            cache = CheckCache(found, {"fmt": fmt, "strict": strict, "cwd": os.getcwd()})
            hit = cache.lookup()
            if hit is not None:
                sys.stdout.write(hit[0])
                return hit[1]
    from lockguard.check.static import static_findings
    from lockguard.io.project.intent_file import load_project
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.knowledge import load_knowledge
    from lockguard.model.lock_paths import lock_paths

    intent = load_project(intent_path, validate=False, validate_matchspec=_matchspec_problem, warn=ui.warn)
    snapshot = read_snapshot(intent)
    from lockguard.io.project.parse_memo import default_memo

    findings = static_findings(snapshot, load_knowledge(validate=False, memo=default_memo()), strict_mode=strict)
    findings = from_here(findings, os.path.dirname(intent.source.location))
    if any(f.code in ("LG100", "LG101", "LG104") for f in findings):
        # the lock does not match the intent: an intent that is itself invalid (an unparsable
        # requirement) is the real problem, reported as bad input rather than as "lock missing"
        load_project(intent_path, validate=True)
    output, code = render_findings(ui, findings, fmt, shown_path(intent.source.location))
    sys.stdout.write(output)
    if cache is not None:
        cache.store([p for p, _kind, _platform in lock_paths(intent)], output, code)
    return code


def _matchspec_problem(spec: str) -> str | None:
    """The MatchSpec check resolve makes (rattler, imported only for an intent with conda specs)."""
    from lockguard.io.index.conda import matchspec_problem

    return matchspec_problem(spec)


def _below_here(root) -> str | None:
    """The project folder relative to the current one when it lies below it ("sub"), else None."""
    relative = os.path.relpath(os.path.realpath(os.fspath(root)), os.path.realpath(os.getcwd()))
    return None if relative == "." or relative.startswith("..") else relative


def shown_path(path) -> str:
    """The intent as the user would type it from here (sub/lockguard.toml from a monorepo's root)."""
    folder = _below_here(os.path.dirname(os.fspath(path)))
    name = os.path.basename(os.fspath(path))
    return os.path.join(folder, name) if folder else name


def from_here(findings: list, root) -> list:
    """Findings name files relative to the project; run from a folder above the project (a monorepo's
    root, where CI runs) they are named from there, so `--intent sub/lockguard.toml --format github`
    annotates sub/Dockerfile, a file that exists in the repository."""
    folder = _below_here(root)
    if folder is None:
        return findings
    from lockguard.model.finding import Finding

    out = []
    for f in findings:
        if f.file and not os.path.isabs(f.file):
            f = Finding(f.code, f.severity, f.message, f.hint, os.path.join(folder, f.file), f.line)
        out.append(f)
    return out


def render_findings(ui: Ui, findings: list, fmt: str, checked: str, code: int | None = None) -> tuple[str, int]:
    from lockguard.check import render
    from lockguard.model.finding import failing

    if code is None:
        code = 1 if failing(findings) else 0
    if fmt == "json":
        import json

        body = ui.envelope(render.json_data(findings, checked=checked), ok=code == 0, exit_code=code)
        return json.dumps(body, indent=2, sort_keys=True, default=str) + "\n", code
    if fmt == "github":
        return render.github(findings), code
    return render.text(findings, checked=checked), code


def emit(ui: Ui, findings: list, fmt: str, checked: str, code: int | None = None) -> int:
    output, code = render_findings(ui, findings, fmt, checked, code)
    sys.stdout.write(output)
    return code
