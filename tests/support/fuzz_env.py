"""The environment family of the bad-input corpus: broken environments and misbehaving
interpreters fed to the environment commands, built deterministically.

Each EnvCase damages its own copy of a small environment and runs one command on it:

- "venv": a real `python -m venv --without-pip` whose site-packages holds the locked packages
  (hand-written dist-infos with true RECORDs), so that the undamaged copy checks clean (exit 0);
- "fake": a folder with pyvenv.cfg and a bin/python that is a shell script (the damage writes it);
- "conda": a conda-prefix-shaped folder (conda-meta/, no interpreter yet);
- "none": no environment at all (the damage makes the target: /, a file, a FIFO, ...).

The commands are read-only or dry runs (check --env, clean-install --dry-run, restore --list,
doctor) or a `restore` that must refuse: tests/test_fuzz.py asserts the exit code, no traceback,
a message naming the damaged file (exit 2), no hang, and an unchanged tree (prefix and project).
What each case expects follows the contract (the README's exit codes: 0 ok, 1 findings, 2 bad
input), not what the code happened to do: 2 where lockguard cannot trust what it reads, 1 where the
damage is a finding the environment really has (an unowned file, a RECORD path out of the prefix:
LG219)."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1 << 20
FAULTY, FAULTY_VERSION = (
    "markupsafe",
    "2.1.5",
)  # the locked package the cases damage (jinja2 needs it)
QID = "20240101-000000-000000-aa"

COMMANDS = {
    "check": ["check", "--intent", "{intent}", "--env", "{prefix}"],
    "dry-run": ["clean-install", "--intent", "{intent}", "--prefix", "{prefix}", "--dry-run"],
    "list": ["restore", "--list", "--prefix", "{prefix}"],
    "restore": ["restore", "--prefix", "{prefix}"],
    "doctor": ["doctor", "--python", "{prefix}/bin/python", "--intent", "{intent}", "--json"],
}


@dataclass
class EnvCase:
    kind: str  # the damage kind (a row of the report)
    name: str  # the damage
    command: str  # a key of COMMANDS, or "argv" with argv given
    shape: str  # "venv", "fake", "conda" or "none"
    damage: Callable[[Path], None]  # applied to the copy of the environment (its prefix)
    expect: frozenset
    names: str | None = None  # stderr must hold it on exit 2; "{prefix}" is filled in
    process: bool = False  # may hang: a subprocess with LOCKGUARD_INTERPRETER_TIMEOUT=2
    argv: list[str] | None = None  # instead of COMMANDS[command]
    env: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"env/{self.kind}/{self.name}/{self.command}"

    def arguments(self, prefix: Path, intent: Path) -> list[str]:
        argv = self.argv if self.argv is not None else COMMANDS[self.command]
        if self.command == "doctor" and self.process:
            argv = [*argv, "--timeout", "2"]
        return [a.replace("{prefix}", str(prefix)).replace("{intent}", str(intent)) for a in argv]


# -- building the environments ---------------------------------------------------------------------


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def site_of(prefix: Path) -> Path:
    return next((prefix / "lib").glob("python3*/site-packages"))


def install_dist(site: Path, name: str, version: str, module: str | None = None) -> Path:
    """A dist-info as pip writes it: METADATA, INSTALLER, a module, and a RECORD with true
    hashes."""
    module = module or name.replace("-", "_").lower()
    info = site / f"{module}-{version}.dist-info"
    info.mkdir(parents=True)
    files = {
        f"{module}/__init__.py": f"__version__ = {version!r}\n".encode(),
        f"{info.name}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"
        ).encode(),
        f"{info.name}/INSTALLER": b"pip\n",
    }
    rows = []
    for relative, data in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_bytes(data)
        rows.append(f"{relative},{_digest(data)},{len(data)}")
    rows.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return info


def fill_venv(prefix: Path, pins: dict[str, str]) -> None:
    """The locked packages (name -> version), FAULTY among them, each as pip would install it."""
    site = site_of(prefix)
    assert pins.get(FAULTY) == FAULTY_VERSION, pins
    for name, version in sorted(pins.items()):
        install_dist(site, name, version)


def fake_env(prefix: Path, script: str | bytes | None = None) -> None:
    (prefix / "bin").mkdir(parents=True, exist_ok=True)
    (prefix / "pyvenv.cfg").write_text("home = /nowhere\n")
    if script is not None:
        python = prefix / "bin" / "python"
        python.write_bytes(
            script if isinstance(script, bytes) else b"#!/bin/sh\n" + script.encode()
        )
        python.chmod(0o755)


def conda_env(prefix: Path) -> None:
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta" / "history").write_text("")


def sparse(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


def fifo(path: Path) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    os.mkfifo(path)


def replace_with_folder(path: Path) -> None:
    if path.exists():
        path.unlink()
    path.mkdir()
    (path / "inside").write_text("x\n")


def make_special(path: Path, kind: str, *, huge: int, nowhere: Path | None = None) -> None:
    """Turn `path` into the special file `kind` names: a fifo, a sparse file of `huge` bytes, a
    folder, a link to /dev/zero, or a link to `nowhere` (dangling)."""
    if kind == "fifo":
        fifo(path)
    elif kind == "huge":
        sparse(path, huge)
    elif kind == "folder":
        replace_with_folder(path)
    elif kind == "dev-zero":
        link(path, "/dev/zero")
    elif kind == "dangling":
        link(path, str(nowhere))
    else:
        raise ValueError(f"no special file {kind!r}")


def link(path: Path, target: str) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target)


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


# -- 1. interpreters that misbehave (a fake environment's bin/python) -----------------------------

_FACTS = (
    '{"prefix": "%s", "path": [], "version": "3.11.7", '
    '"purelib": "%s/lib/python3.11/site-packages", '
    '"platlib": "%s/lib/python3.11/site-packages"}'
)

SCRIPTS: dict[str, str | bytes] = {
    "garbage": "echo 'hello, I am not python'\n",
    "silent": "exit 0\n",
    "json-list": "echo 'LOCKGUARD-FACTS:[1, 2, 3]'\n",
    "json-null": "echo 'LOCKGUARD-FACTS:null'\n",
    "json-empty-object": "echo 'LOCKGUARD-FACTS:{}'\n",
    "partial-json": 'echo \'LOCKGUARD-FACTS:{"prefix": "/x", "path": ["/x"\'\n',
    "prefix-a-number": 'echo \'LOCKGUARD-FACTS:{"prefix": 5, "path": []}\'\n',
    "path-of-numbers": "echo 'LOCKGUARD-FACTS:"
    + _FACTS.replace('"path": []', '"path": [1, 2]')
    + "'\n",
    "version-a-list": "echo 'LOCKGUARD-FACTS:" + _FACTS.replace('"3.11.7"', "[3, 11]") + "'\n",
    "deep-nesting": "printf 'LOCKGUARD-FACTS:'; head -c 200000 /dev/zero | tr '\\0' '['; echo\n",
    "not-utf8": b"#!/bin/sh\nprintf 'LOCKGUARD-FACTS:\\377\\376{\\n'\n",
    "nul-bytes": "printf 'LOCKGUARD-FACTS:{\\0\\0}\\n'\n",
    "exit-3": "echo broken >&2; exit 3\n",
    "exit-1-silent": "exit 1\n",
    "killed-by-signal": "kill -9 $$\n",
    "stderr-flood": "head -c 20000000 /dev/zero | tr '\\0' 'e' >&2; exit 1\n",
    "flood": "yes 'flood'\n",
    "empty-script": b"",
    "binary-garbage": b"\x7fELF\x02\x01\x01\x00garbage\x00\x00\xff\xfe",
    "missing-interpreter": b"#!/nonexistent/python\n",
}
HANGS: dict[str, str] = {
    "never-exits": "sleep 300\n",
    "never-exits-with-child": "sleep 300 &\nsleep 300\n",
    "facts-then-hangs": "echo 'LOCKGUARD-FACTS:" + _FACTS.replace("%s", "/x") + "'\nsleep 300\n",
    "closes-stdout-then-hangs": "exec >&- 2>&-\nsleep 300\n",
    "trickles": "while true; do printf x; sleep 0.2; done\n",
}


def _script_damage(script: str | bytes) -> Callable[[Path], None]:
    return lambda prefix: fake_env(prefix, script)


def _python_damage(what: str) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        fake_env(prefix)
        python = prefix / "bin" / "python"
        if what == "not-executable":
            python.write_text("#!/bin/sh\nexit 0\n")
            python.chmod(0o644)
        elif what == "dangling-symlink":
            python.symlink_to(prefix / "bin" / "python3.99")
        elif what == "a-folder":
            python.mkdir()
        elif what == "a-fifo":
            os.mkfifo(python)
        elif what == "symlink-loop":
            python.symlink_to(python)
        elif what == "link-to-dev-null":
            python.symlink_to("/dev/null")

    return damage


def interpreter_cases() -> list[EnvCase]:
    cases = []
    for command in ("check", "dry-run", "doctor"):
        # a damaged interpreter never passes: bad input (2) for the scan; doctor may instead report
        # the failed probe as an error-level finding (1)
        allowed = frozenset({2}) if command != "doctor" else frozenset({1, 2})
        for name, script in SCRIPTS.items():
            cases.append(
                EnvCase(
                    "interpreter",
                    name,
                    command,
                    "fake",
                    _script_damage(script),
                    allowed,
                    names="{prefix}/bin/python",
                )
            )
        for name, script in HANGS.items():
            cases.append(
                EnvCase(
                    "interpreter-hang",
                    name,
                    command,
                    "fake",
                    _script_damage(script),
                    allowed,
                    names="{prefix}/bin/python",
                    process=True,
                )
            )
        for what in (
            "not-executable",
            "dangling-symlink",
            "a-folder",
            "a-fifo",
            "symlink-loop",
            "link-to-dev-null",
        ):
            cases.append(
                EnvCase(
                    "interpreter-file",
                    what,
                    command,
                    "fake",
                    _python_damage(what),
                    allowed,
                    names="{prefix}"
                    if what in ("dangling-symlink", "symlink-loop")
                    else "{prefix}/bin/python",
                )
            )
    return cases


# -- 2. conda-meta records of the wrong shape ----------------------------------------------------

CONDA_RECORDS: dict[str, str | bytes] = {
    "a-list": "[1, 2]",
    "a-string": '"name"',
    "null": "null",
    "a-number": "5",
    "empty": "",
    "name-a-number": '{"name": 5}',
    "no-name": '{"version": "1.0", "build": "0"}',
    "files-a-string": '{"name": "x", "files": "a-string"}',
    "files-of-numbers": '{"name": "x", "files": [1, 2]}',
    "files-nested": '{"name": "x", "files": [["a"]]}',
    "version-a-list": '{"name": "x", "version": [1]}',
    "build-an-object": '{"name": "x", "build": {}}',
    "truncated": '{"name": "x"',
    "not-utf8": b'{"name": "\xff\xfe"}',
    "nul-bytes": b'{"name": "x\x00"}\x00',
    "deep-nesting": "[" * 100_000,
    "duplicate-keys": '{"name": "x", "name": 5}',
}


def _conda_damage(data: str | bytes | None, special: str | None = None) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        conda_env(prefix)
        record = prefix / "conda-meta" / "x-1.0-0.json"
        if special:
            make_special(record, special, huge=65 * MIB, nowhere=prefix / "nowhere.json")
        else:
            _write(record, data)

    return damage


def conda_cases() -> list[EnvCase]:
    cases = []
    for command in ("check", "dry-run"):
        for name, data in CONDA_RECORDS.items():
            # (duplicate keys: JSON lets the last win, and then the name is not text)
            cases.append(
                EnvCase(
                    "conda-meta",
                    name,
                    command,
                    "conda",
                    _conda_damage(data),
                    frozenset({2}),
                    names="conda-meta/x-1.0-0.json",
                )
            )
        for special in ("fifo", "huge", "folder", "dev-zero", "dangling"):
            cases.append(
                EnvCase(
                    "conda-meta",
                    special,
                    command,
                    "conda",
                    _conda_damage(None, special),
                    frozenset({2}),
                    names="conda-meta/x-1.0-0.json",
                    process=special == "fifo",
                )
            )
    return cases


# -- 3. quarantine state of the wrong shape --------------------------------------------------------

BEGIN = '{"event": "begin"}\n'
_ENTRY = '{"path": "%s", "sha256": null, "mode": 420, "symlink": null, "owner": "x", "reason": "y"}'


def _manifest(entry: str) -> str:
    return '{"entries": [' + entry + "]}"


QUARANTINE_STATES: dict[str, tuple[str | bytes | None, str | bytes | None]] = {
    "manifest-a-list": ("[]", BEGIN),
    "entries-a-string": ('{"entries": "nope"}', BEGIN),
    "entry-path-a-number": ('{"entries": [{"path": 5}]}', BEGIN),
    "entry-mode-a-string": (
        '{"entries": [{"path": "a", "mode": "rw", "owner": "x", "reason": "y"}]}',
        BEGIN,
    ),
    "manifest-truncated": ('{"entries": []', BEGIN),
    "manifest-not-utf8": (b'{"entries": [], "id": "\xff"}', BEGIN),
    "manifest-deep": ("[" * 100_000, BEGIN),
    "manifest-empty": ("", BEGIN),
    "outgoing-a-string": ('{"entries": [], "outgoing": "x"}', BEGIN),
    "entry-mode-huge": (_manifest((_ENTRY % "a.txt").replace("420", str(1 << 70))), BEGIN),
    "entry-mode-negative": (_manifest((_ENTRY % "a.txt").replace("420", "-1")), BEGIN),
    "entry-path-nul": (_manifest(_ENTRY % "a\\u0000b"), BEGIN),
    "journal-a-list-line": ('{"entries": []}', "[1]\n" + BEGIN),
    "journal-garbage-line": ('{"entries": []}', "garbage\n" + BEGIN),
    "journal-moved-path-a-number": (
        '{"entries": []}',
        '{"event": "moved", "path": 7}\n{"event": "done"}\n',
    ),
    "journal-event-a-number": ('{"entries": []}', '{"event": 5}\n'),
    "journal-deep": ('{"entries": []}', "[" * 100_000 + "\n" + BEGIN),
    "journal-not-utf8": (
        '{"entries": []}',
        b'{"event": "begin", "x": "\xff"}\n{"event": "\xfe"}\n' + BEGIN.encode(),
    ),
}
# shapes that are right but point out of the prefix: restore must refuse them, touching nothing
HOSTILE_STATES: dict[str, tuple[str, str]] = {
    "entry-dotdot": (
        _manifest(_ENTRY % "../../outside.txt"),
        BEGIN + '{"event": "moved", "path": "../../outside.txt"}\n',
    ),
    "entry-absolute": (
        _manifest(_ENTRY % "/etc/hostname"),
        BEGIN + '{"event": "moved", "path": "/etc/hostname"}\n',
    ),
    "entry-through-link": (
        _manifest(_ENTRY % "out/x.txt"),
        BEGIN + '{"event": "moved", "path": "out/x.txt"}\n',
    ),
    "entry-state-folder": (
        _manifest(_ENTRY % ".lockguard/x"),
        BEGIN + '{"event": "moved", "path": ".lockguard/x"}\n',
    ),
    "rmdir-dotdot": (
        '{"entries": []}',
        BEGIN + '{"event": "rmdir", "path": "../../gone", "mode": 493}\n',
    ),
}


def _quarantine_damage(manifest, journal, special: str | None = None) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        folder = prefix / ".lockguard" / "quarantine" / QID
        folder.mkdir(parents=True)
        (folder / "files").mkdir()
        if special and special.startswith("manifest"):
            target, other = folder / "manifest.json", ("journal.jsonl", BEGIN)
        else:
            target, other = folder / "journal.jsonl", ("manifest.json", '{"entries": []}')
        if special:
            _write(folder / other[0], other[1])
            make_special(target, special.split("-", 1)[1], huge=513 * MIB)
            return
        if manifest is not None:
            _write(folder / "manifest.json", manifest)
        if journal is not None:
            _write(folder / "journal.jsonl", journal)
        # for entry-through-link: a folder of the prefix that is a link out of it, with a file there
        outside = prefix.parent / "outside"
        outside.mkdir(exist_ok=True)
        (outside / "x.txt").write_text("outside\n")
        (prefix / "out").symlink_to(outside)
        (folder / "files" / "out").mkdir()
        (folder / "files" / "out" / "x.txt").write_text("quarantined\n")
        (folder / "files" / "outside.txt").write_text("quarantined\n")

    return damage


def quarantine_cases() -> list[EnvCase]:
    cases = []
    two = frozenset({2})
    for command in ("list", "restore", "check", "dry-run"):
        for name, (manifest, journal) in QUARANTINE_STATES.items():
            cases.append(
                EnvCase(
                    "quarantine-shape",
                    name,
                    command,
                    "venv",
                    _quarantine_damage(manifest, journal),
                    two,
                    names=QID,
                )
            )
        for special in (
            "manifest-fifo",
            "manifest-huge",
            "manifest-folder",
            "manifest-dev-zero",
            "journal-fifo",
            "journal-huge",
            "journal-folder",
            "journal-dev-zero",
        ):
            cases.append(
                EnvCase(
                    "quarantine-file",
                    special,
                    command,
                    "venv",
                    _quarantine_damage(None, None, special),
                    two,
                    names=QID,
                    process=special.endswith("fifo"),
                )
            )
        for name, (manifest, journal) in HOSTILE_STATES.items():
            # listing it is true (an interrupted run is there): 0; check reports it (LG222): 1;
            # a dry run describes what restore would do: refusing the path (2) or a report (1)
            expect = {"list": {0, 2}, "restore": {2}, "check": {1, 2}, "dry-run": {1, 2}}[command]
            cases.append(
                EnvCase(
                    "quarantine-hostile",
                    name,
                    command,
                    "venv",
                    _quarantine_damage(manifest, journal),
                    frozenset(expect),
                    names=QID,
                )
            )
    return cases


# -- 4. the files of an installed distribution ---------------------------------------------------


def _dist_file_damage(
    file: str, how: str, data: bytes | None = None, package: str = FAULTY
) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        site = site_of(prefix)
        info = next(site.glob(f"{package}-*.dist-info"))
        target = site / "zz-damaged.pth" if file == "pth" else info / file
        if how in ("fifo", "huge", "folder", "dev-zero", "dangling"):
            make_special(
                target,
                how,
                huge=65 * MIB if file == "RECORD" else 2 * MIB,
                nowhere=prefix / "nowhere",
            )
        elif how == "unreadable":
            _write(target, b"x\n")
            target.chmod(0)
        elif how == "append":
            with open(target, "ab") as handle:
                handle.write(data)
        else:
            _write(target, data)

    return damage


_RECORD_HEAD = "markupsafe/__init__.py,sha256=x,1\n"
# rows a clean-install cannot fix (LG219: it never touches such paths): its dry run fails as
# `check --env` does (one severity, issue 35)
UNFIXABLE_ROWS = {
    "absolute-path",
    "dotdot-path",
    "dotdot-inside",
    "dot-path",
    "trailing-slash",
    "empty-fields",
    "a-folder-listed",
}
RECORD_ROWS: dict[str, tuple[bytes, frozenset]] = {
    # a RECORD path out of the prefix is a finding (LG219), never used
    "absolute-path": (b"/etc/hostname,,\n", frozenset({1})),
    "dotdot-path": (b"../../../../../../../../etc/hostname,,\n", frozenset({1})),
    "dotdot-inside": (b"../../../../bin/python,,\n", frozenset({0, 1})),
    # rows pip tolerates (it reads only the path column): at most a finding, never a crash
    # a row with no path names nothing: LG219 (a blank line is no row)
    "empty-fields": (b",,\n,\n\n", frozenset({1})),
    "one-column": (b"markupsafe/__init__.py\n", frozenset({0, 1})),
    "many-columns": (b"markupsafe/__init__.py,sha256=x,1,extra,more,columns\n", frozenset({0, 1})),
    "hash-not-base64": (b"markupsafe/__init__.py,sha256=!!!not*base64!!!,1\n", frozenset({0, 1})),
    "hash-unknown-algorithm": (b"markupsafe/__init__.py,md5=abc,1\n", frozenset({0, 1})),
    "size-not-a-number": (b"markupsafe/libx.so,,big\nmarkupsafe/liby.so,,-5\n", frozenset({0, 1})),
    "unbalanced-quote": (b'"markupsafe/__init__.py,,\n', frozenset({0, 1})),
    "quoted-commas": (b'"markupsafe/a,b.py",,\n', frozenset({0, 1})),
    "missing-file": (b"markupsafe/gone.py,sha256=x,1\n", frozenset({1})),
    # a folder that exists, named without a slash: LG219, never a file to quarantine
    "a-folder-listed": (b"markupsafe,,\n", frozenset({1})),
    # rows that name a folder, not a file (the site, a package folder): LG219, never "missing"
    "dot-path": (b".,,\n./,,\n", frozenset({1})),
    "trailing-slash": (b"markupsafe/,,\n", frozenset({1})),
    "backslashes": (b"markupsafe\\__init__.py,,\n", frozenset({0, 1})),
    "crlf": (b"markupsafe/__init__.py,,\r\nmarkupsafe/x.py,,\r\n", frozenset({0, 1})),
    "long-line": (b"markupsafe/" + b"a" * 100_000 + b".py,,\n", frozenset({0, 1})),
    "many-lines": (
        b"".join(b"markupsafe/m%d.py,,\n" % i for i in range(50_000)),
        frozenset({0, 1}),
    ),
    "state-folder": (b"../../../.lockguard/quarantine/x,,\n", frozenset({0, 1})),
    # undecodable text: reported as bad input naming the file, or read leniently (then a finding)
    "not-utf8": (b"markupsafe/\xff\xfe.py,,\n", frozenset({1, 2})),
    "nul-bytes": (b"markupsafe/a\x00b.py,,\n\x00\x00\n", frozenset({1, 2})),
}
METADATA_BODIES: dict[str, bytes] = {
    "no-name": b"Metadata-Version: 2.1\nVersion: 2.1.5\n",
    "no-version": b"Metadata-Version: 2.1\nName: markupsafe\n",
    "invalid-version": b"Metadata-Version: 2.1\nName: markupsafe\nVersion: not.a.version!\n",
    "empty": b"",
    "name-empty": b"Metadata-Version: 2.1\nName:\nVersion: 2.1.5\n",
    "name-garbage": b"Metadata-Version: 2.1\nName: $$$ ../..\nVersion: 2.1.5\n",
    "binary": b"\x00\x01\x02\xff\xfe" * 1000,
    "not-utf8-name": b"Metadata-Version: 2.1\nName: markupsafe-\xff\nVersion: 2.1.5\n",
    "nul-bytes": b"Metadata-Version: 2.1\nName: markup\x00safe\nVersion: 2.1\x005\n",
    "requires-garbage": (
        b"Metadata-Version: 2.1\nName: markupsafe\nVersion: 2.1.5\nRequires-Dist: ===\n"
    ),
    "long-header": b"Metadata-Version: 2.1\nName: markupsafe\nVersion: 2.1.5\nSummary: "
    + b"s" * (2 * MIB)
    + b"\n",
}


def dist_file_cases() -> list[EnvCase]:
    cases = []
    for command in ("check", "dry-run"):
        # a dry run plans the fix: 0
        finding = frozenset({1}) if command == "check" else frozenset({0})
        lenient = frozenset({0, 1})

        def shift(expect: frozenset, command: str = command) -> frozenset:
            return expect if command == "check" else frozenset({0 if c == 1 else c for c in expect})

        for file in ("RECORD", "METADATA", "INSTALLER", "pth"):
            names = (
                "zz-damaged.pth" if file == "pth" else f"{FAULTY}-{FAULTY_VERSION}.dist-info/{file}"
            )
            for how in ("fifo", "folder", "dev-zero", "unreadable"):
                if how == "unreadable" and os.geteuid() == 0:
                    continue  # root reads everything
                cases.append(
                    EnvCase(
                        f"{file.lower()}-special",
                        how,
                        command,
                        "venv",
                        _dist_file_damage(file, how),
                        frozenset({2}),
                        names=names,
                        process=how == "fifo",
                    )
                )
            cases.append(
                EnvCase(
                    f"{file.lower()}-special",
                    "dangling",
                    command,
                    "venv",
                    _dist_file_damage(file, "dangling"),
                    shift(frozenset({0, 1}) if file != "RECORD" else frozenset({1})),
                    names=names,
                )
            )
            # only the header block of a METADATA and a few bytes of an INSTALLER are read
            huge = frozenset({2}) if file in ("RECORD", "pth") else shift(lenient)
            cases.append(
                EnvCase(
                    f"{file.lower()}-special",
                    "huge",
                    command,
                    "venv",
                    _dist_file_damage(file, "huge"),
                    huge,
                    names=names,
                )
            )
        for name, (rows, expect) in RECORD_ROWS.items():
            cases.append(
                EnvCase(
                    "record-rows",
                    name,
                    command,
                    "venv",
                    _dist_file_damage("RECORD", "append", rows),
                    # LG219 is outside what a clean-install changes: an error to it as to check
                    expect if name in UNFIXABLE_ROWS else shift(expect),
                    names=f"{FAULTY}-{FAULTY_VERSION}.dist-info/RECORD",
                )
            )
        for name, body in METADATA_BODIES.items():
            # no name, no version or an invalid one: the locked package is missing or at another
            # version (a finding), or bad input naming the file; the header block is all that is
            # read
            expect = (
                frozenset({0, 1})
                if name in ("requires-garbage", "long-header")
                else frozenset({1, 2})
            )
            cases.append(
                EnvCase(
                    "metadata",
                    name,
                    command,
                    "venv",
                    _dist_file_damage("METADATA", "write", body),
                    shift(expect),
                    names=f"{FAULTY}-{FAULTY_VERSION}.dist-info/METADATA",
                )
            )
        for name, body in {
            "not-utf8": b"p\xff\xfe\n",
            "nul-bytes": b"p\x00i\x00p\n",
            "empty": b"",
            "long": b"pip" * 100_000,
        }.items():  # informative only: nothing to find
            cases.append(
                EnvCase(
                    "installer",
                    name,
                    command,
                    "venv",
                    _dist_file_damage("INSTALLER", "write", body),
                    shift(lenient),
                    names=f"{FAULTY}-{FAULTY_VERSION}.dist-info/INSTALLER",
                )
            )
        for name, body in PTH_BODIES.items():
            expect, process = body[1], body[2]
            breaks = expect == frozenset({2})  # the interpreter itself fails: the message names it
            cases.append(
                EnvCase(
                    "pth",
                    name,
                    command,
                    "venv",
                    _dist_file_damage("pth", "write", body[0]),
                    shift(expect),
                    names="{prefix}/bin/python" if breaks else "zz-damaged.pth",
                    process=process,
                )
            )
        for name, make in DIST_INFO_NAMES.items():
            # a garbage-named dist-info holding a METADATA is an installed package not in the lock
            # (a finding); one that is a file, a link or a name without a version may be ignored
            expect = shift(finding) if name in DIST_INFO_FOUND else shift(lenient)
            cases.append(
                EnvCase("dist-info-name", name, command, "venv", make, expect, names="dist-info")
            )
        for name, make in PREFIX_FILES.items():
            # a FIFO is no file find lists (nor a module pip wrote): it may go unreported
            expect = shift(lenient) if name == "unowned-fifo" else shift(finding)
            cases.append(
                EnvCase("prefix-file", name, command, "venv", make, expect, names="{prefix}")
            )
    return cases


PTH_BODIES: dict[str, tuple[bytes, frozenset, bool]] = {
    # a .pth that adds folders is a warning (LG214: check --env exits 1 for it only with --strict);
    # one that breaks the interpreter is bad input
    "adds-root": (b"/\n", frozenset({0}), False),
    "adds-dotdot": (b"../../../../..\n", frozenset({0}), False),
    "not-utf8": (b"/tmp/\xff\xfe\n", frozenset({2}), False),  # python's site.py fails on it
    "nul-bytes": (b"/tmp/a\x00b\n", frozenset({0, 1}), False),
    "imports-exit": (b"import os; os._exit(3)\n", frozenset({2}), False),
    "imports-hang": (b"import time; time.sleep(300)\n", frozenset({2}), True),
    "imports-garbage": (b"import this_module_does_not_exist_x\n", frozenset({0, 1}), False),
    "imports-prints": (b"import sys; print('LOCKGUARD-FACTS:[1]')\n", frozenset({0, 1, 2}), False),
    "comments-only": (b"# nothing\n\n", frozenset({0, 1}), False),
    "long-line": (b"/tmp/" + b"a" * 500_000 + b"\n", frozenset({0, 1}), False),
}

# dist-info folders whose name is garbage; these hold a METADATA naming a package not in the lock
DIST_INFO_FOUND = {
    "no-version",
    "only-suffix",
    "dash-only",
    "many-dashes",
    "newline",
    "not-utf8",
    "spaces",
}


def _dist_info_named(
    folder: str | bytes, *, as_file: bool = False, target: str | None = None
) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        site = site_of(prefix)
        path = os.path.join(
            os.fsencode(site), folder if isinstance(folder, bytes) else os.fsencode(folder)
        )
        if target is not None:
            os.symlink(target, path)
        elif as_file:
            with open(path, "wb") as handle:
                handle.write(b"Name: x\n")
        else:
            os.mkdir(path)
            with open(os.path.join(path, b"METADATA"), "wb") as handle:
                handle.write(b"Metadata-Version: 2.1\nName: garbage-pkg\nVersion: 2.1.5\n")
            with open(os.path.join(path, b"RECORD"), "wb") as handle:
                handle.write(b"garbage_pkg/__init__.py,,\n")

    return damage


DIST_INFO_NAMES: dict[str, Callable[[Path], None]] = {
    "no-version": _dist_info_named("garbage.dist-info"),
    "only-suffix": _dist_info_named(".dist-info"),
    "dash-only": _dist_info_named("-.dist-info"),
    "many-dashes": _dist_info_named("a-b-c-d-e.dist-info"),
    "newline": _dist_info_named("x\ny-1.0.dist-info"),
    "not-utf8": _dist_info_named(b"x\xff\xfe-1.0.dist-info"),
    "a-file": _dist_info_named("filed-1.0.dist-info", as_file=True),
    "link-to-root": _dist_info_named("rooted-1.0.dist-info", target="/"),
    "dangling-link": _dist_info_named("dangling-1.0.dist-info", target="/nonexistent/x"),
    "spaces": _dist_info_named("  -  .dist-info"),
}


def _prefix_file(what: str) -> Callable[[Path], None]:
    def damage(prefix: Path) -> None:
        site = site_of(prefix)
        if what == "unowned-library":
            (site / "libstray.so.1").write_bytes(b"\x7fELF stray")
        elif what == "unowned-in-owned-folder":
            (site / FAULTY / "stray.py").write_text("x = 1\n")
        elif what == "symlink-out":
            (site / "escape").symlink_to("/etc")
        elif what == "folder-link-out":
            outside = prefix.parent / "outside-lib"
            outside.mkdir(exist_ok=True)
            (outside / "libout.so.1").write_bytes(b"\x7fELF out")
            (site / "linked").symlink_to(outside)
        # a RECORD path through a symlink that leaves the prefix
        elif what == "record-through-link":
            outside = prefix.parent / "outside-pkg"
            outside.mkdir(exist_ok=True)
            (outside / "mod.py").write_text("x = 1\n")
            (site / "via").symlink_to(outside)
            info = next(site.glob(f"{FAULTY}-*.dist-info"))
            with open(info / "RECORD", "a") as handle:
                handle.write("via/mod.py,,\n")
        elif what == "unowned-fifo":
            os.mkfifo(site / "stray_fifo.py")
        elif what == "module-a-fifo":
            fifo(site / FAULTY / "__init__.py")
        elif what == "unowned-package":
            (site / "orphan").mkdir()
            (site / "orphan" / "__init__.py").write_text("")

    return damage


PREFIX_FILES: dict[str, Callable[[Path], None]] = {
    name: _prefix_file(name)
    for name in (
        "unowned-library",
        "unowned-in-owned-folder",
        "symlink-out",
        "folder-link-out",
        "record-through-link",
        "unowned-fifo",
        "module-a-fifo",
        "unowned-package",
    )
}


# -- 5. targets that are not environments ----------------------------------------------------------


def target_cases(scratch_python: str) -> list[EnvCase]:
    """`scratch_python`: a relative path that does not exist from the case's working directory."""
    cases = []

    def nothing(prefix: Path) -> None:
        pass

    def make(what: str) -> Callable[[Path], None]:
        def damage(prefix: Path) -> None:
            if what == "file":
                prefix.write_text("not an environment\n")
            elif what == "fifo":
                os.mkfifo(prefix)
            elif what == "empty-folder":
                prefix.mkdir()
            elif what == "only-pyvenv":
                prefix.mkdir()
                (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
            elif what == "pyvenv-a-folder":
                prefix.mkdir()
                (prefix / "pyvenv.cfg").mkdir()
            elif what == "dangling-link":
                prefix.symlink_to(prefix.parent / "gone")
            elif what == "link-to-root":
                prefix.symlink_to("/")
            elif what == "link-loop":
                prefix.symlink_to(prefix)
            elif what == "conda-meta-a-file":
                prefix.mkdir()
                (prefix / "conda-meta").write_text("")

        return damage

    named = {
        "root": "/",
        "usr": "/usr",
        "etc": "/etc",
        "dev-null": "/dev/null",
        "proc-self": "/proc/self",
    }
    for command in ("check", "dry-run", "list", "restore"):
        for label, path in named.items():
            cases.append(
                EnvCase(
                    "not-an-environment",
                    label,
                    command,
                    "none",
                    nothing,
                    frozenset({2}),
                    names=path,
                    argv=[a.replace("{prefix}", path) for a in COMMANDS[command]],
                )
            )
        for what in (
            "file",
            "fifo",
            "empty-folder",
            "only-pyvenv",
            "pyvenv-a-folder",
            "dangling-link",
            "link-to-root",
            "link-loop",
            "conda-meta-a-file",
            "missing",
        ):
            # a pyvenv.cfg makes a venv (one without its python yet): it has no clean-install runs
            expect = (
                frozenset({0}) if (what, command) == ("only-pyvenv", "list") else frozenset({2})
            )
            cases.append(
                EnvCase(
                    "not-an-environment",
                    what,
                    command,
                    "none",
                    nothing if what == "missing" else make(what),
                    expect,
                    names="{prefix}",
                )
            )
    python_commands = {
        "check": ["check", "--intent", "{intent}", "--python", "{python}"],
        "dry-run": ["clean-install", "--intent", "{intent}", "--python", "{python}", "--dry-run"],
        "doctor": ["doctor", "--intent", "{intent}", "--json", "--python", "{python}"],
    }
    pythons = {
        "relative-missing": scratch_python,
        "relative-missing-dot": "./python3-not-here",
        "fifo": "{prefix}",
        "folder": "{prefix}/",
        "dev-null": "/dev/null",
        "empty": "",
        "root": "/",
    }
    for command, argv in python_commands.items():
        for label, python in pythons.items():
            setup = (
                make("fifo")
                if label == "fifo"
                else make("empty-folder")
                if label == "folder"
                else nothing
            )
            cases.append(
                EnvCase(
                    "bad-python",
                    label,
                    command,
                    "none",
                    setup,
                    frozenset({2}),
                    names=None if label == "empty" else python.lstrip("./").rstrip("/") or "/",
                    argv=[a.replace("{python}", python) for a in argv],
                )
            )
    return cases


def env_corpus() -> list[EnvCase]:
    return (
        interpreter_cases()
        + conda_cases()
        + quarantine_cases()
        + dist_file_cases()
        + target_cases("no-such-dir/python3")
    )
