"""Plain `lockguard check` without click: the same command, parsed by hand because it runs on every
commit (the click definition in check_cmd.py handles --help, --env, --python and -v)."""

from __future__ import annotations

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
            cache = CheckCache(found, {"fmt": fmt, "strict": strict})
            hit = cache.lookup()
            if hit is not None:
                sys.stdout.write(hit[0])
                return hit[1]
    from lockguard.check.static import static_findings
    from lockguard.io.project.intent_file import load_project
    from lockguard.io.project.project_files import read_snapshot
    from lockguard.knowledge import load_knowledge
    from lockguard.model.lock_paths import lock_paths

    intent = load_project(intent_path, validate=False, warn=ui.warn)
    snapshot = read_snapshot(intent)
    from lockguard.io.project.parse_memo import default_memo

    findings = static_findings(snapshot, load_knowledge(validate=False, memo=default_memo()), strict_mode=strict)
    if any(f.code in ("LG100", "LG101", "LG104") for f in findings):
        # the lock does not match the intent: an intent that is itself invalid (an unparsable
        # requirement) is the real problem, reported as bad input rather than as "lock missing"
        load_project(intent_path, validate=True)
    output, code = render_findings(ui, findings, fmt, intent.source.name)
    sys.stdout.write(output)
    if cache is not None:
        cache.store([p for p, _kind, _platform in lock_paths(intent)], output, code)
    return code


def render_findings(ui: Ui, findings: list, fmt: str, checked: str) -> tuple[str, int]:
    from lockguard.check import render
    from lockguard.model.finding import failing

    code = 1 if failing(findings) else 0
    if fmt == "json":
        import json

        body = ui.envelope(render.json_data(findings, checked=checked), ok=code == 0, exit_code=code)
        return json.dumps(body, indent=2, sort_keys=True, default=str) + "\n", code
    if fmt == "github":
        return render.github(findings), code
    return render.text(findings, checked=checked), code


def emit(ui: Ui, findings: list, fmt: str, checked: str) -> int:
    output, code = render_findings(ui, findings, fmt, checked)
    sys.stdout.write(output)
    return code
