"""A corpus of bad, hostile and broken inputs for the lockguard CLI, built deterministically.

Each Case says how to damage a copy of a locked project (or its environment), which command to
run, and what the contract allows: the exit codes, and that the message names the file (and the
line, where the input has lines). tests/test_fuzz.py runs every case and also asserts, for all of
them: no traceback, no internal error, and no file changed outside the declared outputs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lockguard.lockfiles.headers import PLACEHOLDER, seal

INTENT = "lockguard.toml"
LOCKS = ("requirements.lock", "environment.yml", "conda-lock.yml")


@dataclass
class Case:
    family: str
    name: str
    argv: list[str]  # after `lockguard`; "{project}" and "{intent}" are filled in
    setup: Callable[[Path], None] = lambda project: None
    expect: frozenset = frozenset({2})
    names: str | None = None  # must appear in stderr (a file name)
    line: bool = False  # the message must give file:line
    process: bool = False  # run in a subprocess (inputs that could hang a process)
    outputs: tuple[str, ...] = ()  # files the command may change
    env: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"


def reseal_text(text: str) -> str:
    text = re.sub(
        r"(lockguard-body-hash: sha256:)[0-9a-f]{64}",
        lambda m: m.group(1) + PLACEHOLDER,
        text,
        count=1,
    )
    return seal(text) if PLACEHOLDER in text else text


def _replace_key(text: str, key: str, literal: str) -> str:
    """The intent with `key = literal` (replacing the key's line, or appending it before any
    table)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if re.match(rf"^{re.escape(key)}\s*=", line):
            lines[index] = f"{key} = {literal}"
            return "\n".join(lines) + "\n"
    return f"{key} = {literal}\n" + text


def _write(path: Path, data: str | bytes) -> None:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


RESOLVE = ["resolve", "--offline", "--intent", "{intent}"]
CHECK = ["check", "--no-cache", "--intent", "{intent}"]

# -- 1. intent values of the wrong type or form ---------------------------------------------------

BAD_VALUES: dict[str, list[str]] = {
    "python": [
        "3",
        '"3"',
        '"three"',
        '""',
        '"3.11.x"',
        '["3.11"]',
        "true",
        '"3.11; rm -rf /"',
        '"\\u0000"',
        '{ v = "3.11" }',
        '"3..11"',
        '"v3.11"',
        '"\u0663.\u0661\u0661"',
        '"\uff13.\uff11\uff11"',
    ],
    "cuda": [
        "12.1",
        '"12"',
        '"cuda12"',
        '""',
        '["12.1"]',
        '"12.1.x"',
        '"-1.0"',
        "false",
        '"Auto"',
        '"none "',
        '"12,1"',
        '"\uff11\uff12.\uff11"',
    ],
    "driver": [
        "535",
        '"535.x"',
        '"abc"',
        '""',
        '["535.104.05"]',
        '"535.104.05.1.2.3"',
        '"-535.1"',
        "true",
        '"\uff15\uff13\uff15.104.05"',
    ],
    "gpu": [
        '"sm_80"',
        "80",
        '["sm80x"]',
        '["compute_80"]',
        "[80]",
        '["sm_"]',
        '[""]',
        '["sm_80", 90]',
        '"Auto"',
        "{ a = 1 }",
        '["sm_8a"]',
        '["sm_80a"]',
        '["sm_90f"]',
        '["sm_\u0668\u0660"]',
    ],
    "platforms": [
        '"linux-64"',
        "[]",
        '["linux64"]',
        '["win-32"]',
        "[64]",
        '["linux-64", "solaris"]',
        '[""]',
        '["../linux-64"]',
    ],
    "channels": [
        '"conda-forge"',
        "[1]",
        '["conda forge"]',
        '["ftp://x"]',
        '[""]',
        '["a b c"]',
        '["http://"]',
        '["conda-forge", ["x"]]',
        '["$(id)"]',
    ],
    "conda": ['"cuda-nvcc"', "[1]", "[[]]", "[{}]", '["cuda-nvcc", 2]'],
    "pip": [
        '"torch"',
        "[1]",
        '["torch==="]',
        '["torch >= "]',
        '["torch[cuda"]',
        '[""]',
        '["-e ."]',
        '["--index-url x"]',
        '["torch; python_version >"]',
        '["torch @ "]',
        '[["torch"]]',
        '["torch==2.1.*.*"]',
        '["torch~=2"]',
        '["jinja2", 5]',
    ],
    "indexes": [
        '"https://pypi.org/simple"',
        "[]",
        '["pypi.org/simple"]',
        '["ftp://x/simple"]',
        "[1]",
        '[""]',
        '["https://"]',
        '["https://pypi.org/simple with spaces"]',
        '["http://[::1"]',
        '["http://x:99999/simple"]',
        '["http://%zz/simple"]',
        '["http://a\u0000b/simple"]',
        '["http://:80/simple"]',
    ],
    "pytorch-index": [
        "1",
        '""',
        '"download.pytorch.org"',
        '["https://x"]',
        '"ftp://x"',
        '"https://"',
        '"http://[::1"',
        '"https://x:70000/whl"',
    ],
    "exclude-newer": [
        '"yesterday"',
        "1",
        '"2024-13-01T00:00:00Z"',
        '"2024-03-01T00:00:00"',
        '"1970-01-01T00:00:00Z"',
        '"2999-01-01T00:00:00Z"',
        '["2024-03-01T00:00:00Z"]',
        "2024-03-01T00:00:00",
        "true",
        '"2024-02-30T00:00:00Z"',
        '""',
        '"0001-01-01T00:00:00+01:00"',
        '"9999-12-31T23:59:59-01:00"',
        "0001-01-01",
        "9999-12-31T23:59:59Z",
    ],
    "conda-from-knowledge": ['"yes"', "1", '"true"', "[]", "0"],
    "glibc": ["2.28", '"2"', '"2.x"', '"glibc-2.28"', '""', '["2.28"]', '"3.1"', '"2.280"'],
    "name": ["1", '""', '"my env"', '"a/b"', '"../x"', '"x;y"', '["x"]', '"\\u00e9t\\u00e9\\n"'],
    "dependency-metadata": [
        "1",
        '"x"',
        "[1]",
        "[{ name = 1 }]",
        '[{ name = "x" }]',
        '[{ name = "x", version = "1" , requires-dist = "y" }]',
        '[{ name = "x", version = "one" }]',
        '[{ name = "x", version = "1", requires-dist = ["y==="] }]',
        '[{ name = "x", version = "1", requires-python = ">=>3" }]',
        '[{ name = "x", version = "1", extra = 1 }]',
        '[{ name = "x", version = "1", requires-python = 5 }]',
        '[{ name = "x", version = "1", requires-python = [">=3"] }]',
        '[{ name = "a b/../c", version = "1" }]',
        '[{ name = "", version = "1" }]',
        '[{ name = "x", version = "%s" }]' % ("1" * 5000),
    ],
}


def intent_value_cases(base: str) -> list[Case]:
    cases = []
    for key in BAD_VALUES:  # every key, once with a megabyte and once with control characters
        if key == "dependency-metadata":
            continue
        for label, literal in (
            ("huge", '"' + "9" * 1_000_000 + '"'),
            ("control", '"\\u0007\\u001b[31m"'),
        ):
            text = _replace_key(
                base,
                key,
                literal
                if key not in ("gpu", "platforms", "channels", "conda", "pip", "indexes")
                else f"[{literal}]",
            )
            cases.append(
                Case(
                    "intent-value",
                    f"{key}-{label}",
                    RESOLVE,
                    setup=lambda p, t=text: _write(p / INTENT, t),
                    names=INTENT,
                    line=True,
                )
            )
    for key, values in BAD_VALUES.items():
        for number, literal in enumerate(values):
            text = _replace_key(base, key, literal)
            cases.append(
                Case(
                    "intent-value",
                    f"{key}#{number}",
                    RESOLVE,
                    setup=lambda p, t=text: _write(p / INTENT, t),
                    names=INTENT,
                    line=True,
                )
            )
    return cases


def unknown_key_cases(base: str) -> list[Case]:
    cases = []
    for key in (
        "python",
        "cuda",
        "driver",
        "gpu",
        "platforms",
        "channels",
        "conda",
        "pip",
        "indexes",
        "pytorch-index",
        "exclude-newer",
        "glibc",
        "name",
        "outputs",
    ):
        for label, typo in (
            ("drop", key[1:]),
            ("swap", key[1] + key[0] + key[2:]),
            ("case", key.upper()),
        ):
            text = base + f'{typo} = "x"\n' if key != "outputs" else base + f"[{typo}]\nx = 1\n"
            cases.append(
                Case(
                    "unknown-key",
                    f"{key}-{label}",
                    RESOLVE,
                    setup=lambda p, t=text: _write(p / INTENT, t),
                    names=INTENT,
                    line=True,
                )
            )
    for label, table in (
        ("outputs", '[outputs]\nrequirement = "r.lock"\n'),
        ("dm", '[[dependency-metadata]]\nname = "x"\nversion = "1"\nrequires = []\n'),
    ):
        cases.append(
            Case(
                "unknown-key",
                label,
                RESOLVE,
                setup=lambda p, t=base + table: _write(p / INTENT, t),
                names=INTENT,
                line=True,
            )
        )
    return cases


# -- 2. intents that are not TOML ----------------------------------------------------------------


def toml_syntax_cases(base: str) -> list[Case]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    cases = []
    data = base.encode()
    for cut in range(3, len(data), 7):  # truncations that tomllib rejects
        piece = data[:cut]
        try:
            tomllib.loads(piece.decode("utf-8", "strict"))
            continue
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            pass
        cases.append(
            Case(
                "toml-truncated",
                f"at-{cut}",
                RESOLVE,
                setup=lambda p, d=piece: _write(p / INTENT, d),
                names=INTENT,
                line=True,
            )
        )
    damages = {
        "unclosed-array": base.replace('"jinja2", "numpy"]', '"jinja2", "numpy"'),
        "unclosed-string": base.replace('python = "3.11"', 'python = "3.11'),
        "unclosed-table": base + "[outputs\n",
        "duplicate-key": base + 'python = "3.12"\n',
        "duplicate-table": base + "[outputs]\n[outputs]\n",
        "bare-word": base + "garbage\n",
        "equals-only": base + "=\n",
        "tab-key": base + "\tpython\t=\n",
        "control-char": base + 'name = "a\x01b"\n',
        "crlf-mix": base.replace("\n", "\r\n", 2) + "x = \r",
        "nested-deep": base + "deep = " + "[" * 2000 + "]" * 2000 + "\n",
        "bom-garbage": "\ufeff\ufeff" + base,
        "null-bytes": base + "\x00\x00\n",
        "huge-line": base + "# " + "x" * 300_000 + "\nbad = \n",
        "only-comment": "# nothing here\n",
        "empty": "",
        "python-missing": base.replace('python = "3.11"\n', ""),
        "cuda-missing": base.replace('cuda = "12.1"\n', ""),
        "array-of-tables-clash": base + "[[outputs]]\n",
        "dotted-clash": base + 'outputs.environment = "e.yml"\n[outputs]\n',
        "inline-table-trailing": base + "outputs = { environment = 'e.yml', }\n",
    }
    for label, text in damages.items():
        cases.append(
            Case(
                "toml-syntax",
                label,
                RESOLVE,
                setup=lambda p, t=text: _write(p / INTENT, t),
                names=INTENT,
                line=label not in ("empty", "only-comment", "python-missing", "cuda-missing"),
            )
        )
    for offset in range(0, len(data), max(1, len(data) // 24)):  # invalid UTF-8 at many places
        damaged = data[:offset] + b"\xc3\x28" + data[offset:]
        cases.append(
            Case(
                "intent-utf8",
                f"at-{offset}",
                RESOLVE,
                setup=lambda p, d=damaged: _write(p / INTENT, d),
                names=INTENT,
                line=True,
            )
        )
    return cases


# -- 3. hostile [outputs] --------------------------------------------------------------------------

HOSTILE_OUTPUTS = [
    ".git/config",
    ".git/hooks/pre-commit.lock",
    "../x.lock",
    "../../etc/passwd.lock",
    "/etc/x.lock",
    "/tmp/x.lock",
    "~/x.lock",
    "~root/x.lock",
    "lockguard.toml",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    ".gitignore",
    "a/../../x.lock",
    "./../x.lock",
    "locks//x.lock",
    "x.lock/",
    ".",
    "..",
    "",
    " x.lock",
    "x.lock ",
    "a\\..\\x.lock",
    "C:/x.lock",
    "c:x.lock",
    "x\x00.lock",
    "x\n.lock",
    ".venv/x.lock",
    ".lockguard/x.lock",
    "node_modules/x.lock",
    "x" * 300 + ".lock",
    "x.py",
    "x.toml",
    "requirements.yml",
    "x",
]


def hostile_output_cases() -> list[Case]:
    cases = []
    for number, value in enumerate(HOSTILE_OUTPUTS):
        key = "requirements"
        escaped = (
            value.replace("\\", "\\\\")
            .replace('"', '\\"')
            .replace("\x00", "\\u0000")
            .replace("\n", "\\n")
        )

        def setup(p, v=escaped, k=key):
            _write(p / INTENT, (p / INTENT).read_text() + f'\n[outputs]\n{k} = "{v}"\n')

        cases.append(
            Case(
                "hostile-output",
                f"requirements#{number}",
                ["resolve", "--intent", "{intent}"],
                setup=setup,
                names=INTENT,
                line=True,
            )
        )
    for a, b in (("environment", "conda-lock"), ("requirements", "environment")):
        for number, (va, vb) in enumerate(
            (("same.yml", "same.yml"), ("Same.yml", "same.yml"), ("d/x.yml", "d/./x.yml"))
        ):
            if a == "requirements":
                va, vb = va.replace(".yml", ".lock"), vb.replace(".yml", ".lock")

            def setup(p, a=a, b=b, va=va, vb=vb):
                _write(
                    p / INTENT,
                    (p / INTENT).read_text() + f'\n[outputs]\n{a} = "{va}"\n{b} = "{vb}"\n',
                )

            cases.append(
                Case(
                    "hostile-output",
                    f"same-{a}-{b}#{number}",
                    ["resolve", "--intent", "{intent}"],
                    setup=setup,
                    names=INTENT,
                    line=True,
                    expect=frozenset({2}),
                )
            )
    # targets that are not regular files, or that point out of the project
    for lock in LOCKS:
        for kind in ("folder", "fifo", "symlink-out", "dangling-out", "dev-null"):
            cases.append(
                Case(
                    "hostile-target",
                    f"{lock}-{kind}",
                    ["resolve", "--intent", "{intent}"],
                    setup=lambda p, lock=lock, kind=kind: _special(p / lock, kind),
                    names=lock,
                    process=True,
                )
            )
    return cases


def _special(path: Path, kind: str) -> None:
    if os.path.lexists(path):
        path.unlink()
    if kind == "folder":
        path.mkdir()
        (path / "keep").write_text("x")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-out":
        outside = path.parent.parent / f"outside-{path.name}"
        outside.write_text("outside\n")
        os.symlink(outside, path)
    elif kind == "dangling-out":
        os.symlink(path.parent.parent / f"nowhere-{path.name}", path)
    elif kind == "dev-null":
        os.symlink("/dev/null", path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "loop":
        os.symlink(path.name, path)
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(80 * 1024 * 1024)  # sparse: big to stat, cheap on disk


# -- 4. lock files damaged, with and without a recomputed body hash --------------------------------

BENIGN = {
    "requirements.lock": {"swap-case"},
    "environment.yml": {"swap-case", "blank-after-pin"},
    "conda-lock.yml": {"blank-after-pin", "bom"},
}
_PIN_LINE = re.compile(
    r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*==|    - [A-Za-z0-9][A-Za-z0-9._-]*==|- name: )"
)


def _line_damages(text: str) -> dict[str, str]:
    """Damages aimed at the lines that carry pins (a damage to a comment can be harmless)."""
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if _PIN_LINE.match(line)]
    first, middle, last = body[0], body[len(body) // 2], body[-1]
    return {
        "delete-first": "\n".join(lines[:first] + lines[first + 1 :]),
        "delete-middle": "\n".join(lines[:middle] + lines[middle + 1 :]),
        "duplicate-middle": "\n".join(lines[: middle + 1] + lines[middle:]),
        "garbage-line": "\n".join(lines[:middle] + ["%%% not a lock line %%%"] + lines[middle:]),
        "spaces-run": "\n".join(
            lines[:middle]
            + [lines[middle].replace(" ", "     ", 1) or "     "]
            + lines[middle + 1 :]
        ),
        "tab-indent": "\n".join(
            lines[:middle] + ["\t" + lines[middle].lstrip()] + lines[middle + 1 :]
        ),
        "truncate-half": text[: len(text) // 2],
        "truncate-last-line": "\n".join(lines[:last]) + "\n" + lines[last][: len(lines[last]) // 2],
        "crlf": text.replace("\n", "\r\n"),
        "append-junk": text + "\x7f\x7f junk: [\n",
        "bracket": "\n".join(lines[:middle] + [lines[middle] + " ["] + lines[middle + 1 :]),
        "colon": "\n".join(lines[:middle] + [lines[middle] + ": x"] + lines[middle + 1 :]),
        "swap-case": "\n".join(lines[:middle] + [lines[middle].upper()] + lines[middle + 1 :]),
        "empty-body": "\n".join(line for line in lines if line.startswith("#")) + "\n",
        "tail-duplicate": text + "\n".join(lines[middle : middle + 3]) + "\n",
        "version-garbage": "\n".join(
            lines[:middle]
            + [re.sub(r"(==|version: )\S+", r"\g<1>1.0.0+++!!", lines[middle])]
            + lines[middle + 1 :]
        ),
        "name-with-space": "\n".join(
            lines[:middle]
            + [lines[middle].replace("==", " x==", 1).replace("name: ", "name: a ")]
            + lines[middle + 1 :]
        ),
        "pin-loosened": "\n".join(
            lines[:middle]
            + [lines[middle].replace("==", ">=", 1).replace("name: ", "name: >=")]
            + lines[middle + 1 :]
        ),
        "blank-after-pin": "\n".join(lines[: middle + 1] + [""] + lines[middle + 1 :]),
        "bom": "\ufeff" + text,
        "zero-width": "\n".join(
            lines[:middle]
            + [lines[middle].replace("==", "\u200b==", 1).replace(": ", ":\u200b ", 1)]
            + lines[middle + 1 :]
        ),
        "very-long-line": "\n".join(
            lines[:middle] + [lines[middle] + "x" * 100_000] + lines[middle + 1 :]
        ),
    }


def lock_damage_cases(template: Path) -> list[Case]:
    cases = []
    for lock in LOCKS:
        text = (template / lock).read_text()
        for label, damaged in _line_damages(text).items():
            for sealed in (False, True):
                content = reseal_text(damaged) if sealed else damaged
                if content == text:
                    continue
                # a changed lock file never passes: a hand edit (1) or a file lockguard cannot read
                # (2); an edit that means the same (a name's case, a blank line in YAML, a BOM
                # before YAML) and was re-sealed is no finding at all, and unsealed it is only the
                # hand edit
                if label in BENIGN.get(lock, ()):
                    expect = frozenset({0}) if sealed else frozenset({1})
                else:
                    expect = frozenset({1, 2})
                cases.append(
                    Case(
                        "lock-damage",
                        f"{lock}-{label}{'-resealed' if sealed else ''}",
                        CHECK,
                        setup=lambda p, lock=lock, c=content: _write(p / lock, c),
                        expect=expect,
                        names=lock,
                    )
                )
        data = text.encode()
        for offset in range(len(data) // 6, len(data), max(1, len(data) // 6)):
            damaged = data[:offset] + b"\xff" + data[offset:]
            cases.append(
                Case(
                    "lock-utf8",
                    f"{lock}-at-{offset}",
                    CHECK,
                    setup=lambda p, lock=lock, d=damaged: _write(p / lock, d),
                    names=lock,
                    line=True,
                )
            )
    yaml_shapes = {
        "list": "- a\n- b\n",
        "scalar": "hello\n",
        "number": "42\n",
        "null": "~\n",
        "package-mapping": "version: 1\npackage:\n  name: x\n",
        "package-strings": "version: 1\npackage:\n- x\n- y\n",
        "package-null-names": (
            "version: 1\npackage:\n- name: null\n  manager: pip\n"
            "  platform: linux-64\n  version: 1\n"
        ),
        "name-list": (
            "version: 1\npackage:\n- name: [a]\n  manager: pip\n"
            "  platform: linux-64\n  version: 1\n"
        ),
        "manager-odd": (
            "version: 1\npackage:\n- name: a\n  manager: npm\n  platform: linux-64\n  version: 1\n"
        ),
        "version-mapping": (
            "version: 1\npackage:\n- name: a\n  manager: pip\n"
            "  platform: linux-64\n  version: {x: 1}\n"
        ),
        "duplicate-keys": (
            "version: 1\npackage:\n- name: a\n  name: b\n  manager: pip\n"
            "  platform: linux-64\n  version: 1\n"
        ),
        "duplicate-top": "version: 1\nversion: 2\npackage: []\n",
        "anchors": (
            "version: 1\npackage:\n"
            "- &a {name: a, manager: pip, platform: linux-64, version: 1}\n- *a\n"
        ),
        "tagged": "version: 1\npackage: !!python/object:os.system x\n",
        "deep": "version: 1\npackage: " + "[" * 600 + "]" * 600 + "\n",
        "tabs": "version: 1\npackage:\n\t- name: a\n",
        "unclosed-quote": "version: 1\npackage:\n- name: 'a\n",
        "binary-tag": "version: 1\npackage: !!binary AAAA\n",
    }
    head = "".join(
        line
        for line in (template / "conda-lock.yml").read_text().splitlines(keepends=True)
        if line.startswith("#")
    )
    for label, body in yaml_shapes.items():
        for sealed in (False, True):
            content = reseal_text(head + body) if sealed else head + body
            cases.append(
                Case(
                    "conda-lock-shape",
                    f"{label}{'-resealed' if sealed else ''}",
                    CHECK,
                    setup=lambda p, c=content: _write(p / "conda-lock.yml", c),
                    expect=frozenset({2}) if sealed else frozenset({1, 2}),
                    names="conda-lock.yml",
                )
            )
    return cases


# -- 5. files that are not regular files -----------------------------------------------------------


def special_file_cases() -> list[Case]:
    cases = []
    for target in (INTENT, *LOCKS):
        for kind in ("fifo", "dev-zero", "folder", "loop", "huge"):
            expect = frozenset({2})
            cases.append(
                Case(
                    "special-file",
                    f"{target}-{kind}",
                    CHECK,
                    setup=lambda p, t=target, k=kind: _special(p / t, k),
                    expect=expect,
                    names=target,
                    process=True,
                )
            )
    for repo_file in ("requirements.txt", "Dockerfile", "pyproject.toml"):
        for kind in ("fifo", "dev-zero", "huge", "loop"):
            # a repository file lockguard cannot read pins nothing: skipped, and the check still
            # answers
            cases.append(
                Case(
                    "special-file",
                    f"{repo_file}-{kind}",
                    CHECK,
                    setup=lambda p, t=repo_file, k=kind: _special(p / t, k),
                    expect=frozenset({0, 1, 2}),
                    process=True,
                )
            )
    return cases


# -- 6. command lines ------------------------------------------------------------------------------


def cli_cases() -> list[Case]:
    argvs = [
        ["check", "--format", "yaml"],
        ["check", "--format"],
        ["check", "--intent"],
        ["check", "--intent", ""],
        ["check", "--intent", "{project}"],
        ["check", "--intent", "{project}/missing.toml"],
        ["check", "--env"],
        ["check", "--env", "{project}/missing"],
        ["check", "--env", "{project}", "--python", "/bin/sh"],
        ["check", "--bogus"],
        ["resolve", "--platform", "solaris-64", "--intent", "{intent}"],
        ["resolve", "--intent", "{intent}", "--intent"],
        ["resolve", "--offline", "--refresh", "--intent", "{project}"],
        ["explain"],
        ["explain", "--intent", "{intent}", ""],
        ["explain", "--intent", "{intent}", "no-such-package"],
        ["explain", "--intent", "{intent}", "x" * 5000],
        ["constraints", "show", "torch"],
        ["constraints", "show", "torch", "abc"],
        ["constraints", "show", "cuda", "99.9"],
        ["constraints", "nope"],
        ["constraints", "show", "torch", "2.1", "extra"],
        ["init", "--python", "three"],
        ["init", "--cuda", "x"],
        ["init", "--python", "3.11", "torch==="],
        ["init", "--python", "3.11", "--cuda", "12.1", "--force", "--bogus"],
        ["doctor", "--python", "{project}/nope"],
        ["doctor", "--bogus"],
        ["restore", "--prefix", "{project}/nope"],
        ["restore", "nope-id", "--prefix", "{project}"],
        ["clean-install", "--intent", "{intent}"],
        ["clean-install", "--intent", "{intent}", "--prefix", "{project}", "--python", "/bin/sh"],
        ["clean-install", "--intent", "{intent}", "--prefix", "{project}/nope"],
        ["nosuchcommand"],
        ["--bogus"],
        ["check", "--format", "json", "--format", "xml"],
        ["resolve", "--check", "--intent", "{project}/lockguard.toml/x"],
        ["check", "--intent", "/dev/null"],
        ["check", "--intent", "/dev/zero"],
        ["resolve", "--intent", "/"],
        ["check", "--intent", "{project}/requirements.lock"],
        ["constraints", "show", "--platform", "bogus", "torch", "2.1"],
        ["constraints", "show", "--python", "3.x", "torch", "2.1"],
        ["explain", "--intent", "{intent}", "--platform", "bogus", "jinja2"],
        ["explain", "--intent", "{intent}", "--platform", "linux-aarch64", "jinja2"],
        ["check", "--json", "--bogus"],
        ["explain", "--format", "yaml", "jinja2"],
    ]
    cases = []
    for number, argv in enumerate(argvs):
        cases.append(
            Case(
                "cli",
                f"{number}:{' '.join(argv)[:60]}",
                argv,
                expect=frozenset({2}),
                process="/dev/zero" in argv,
            )
        )
    return cases


# -- 7. pyproject.toml next to (or instead of) lockguard.toml --------------------------------------


def pyproject_cases(base: str) -> list[Case]:
    cases = []
    tables = {
        "tool-lockguard-int": "[tool]\nlockguard = 1\n",
        "tool-string": 'tool = "x"\n',
        "invalid-table": '[tool.lockguard]\npython = "3.11"\ncdua = "12.1"\n',
        "broken-toml": "[tool.lockguard\npython = 1\n",
        "empty-table": "[tool.lockguard]\n",
        "wrong-python": '[tool.lockguard]\npython = 3.11\ncuda = "12.1"\n',
        "utf8": b'[tool.lockguard]\npython = "3.11\xff"\n',
    }
    for label, text in tables.items():
        # with lockguard.toml present: the invalid shadowed table is an error (the valid one a
        # warning)
        # (a pyproject without a lockguard table is not an intent: `tool = "x"` beside
        # lockguard.toml is fine)
        cases.append(
            Case(
                "pyproject",
                f"beside-{label}",
                ["check", "--no-cache"],
                setup=lambda p, t=text: _write(p / "pyproject.toml", t),
                expect=frozenset({0} if label == "tool-string" else {2}),
                names="pyproject.toml",
            )
        )

        def alone(p, t=text):
            (p / INTENT).unlink()
            _write(p / "pyproject.toml", t)

        cases.append(
            Case(
                "pyproject",
                f"alone-{label}",
                ["check", "--no-cache"],
                setup=alone,
                expect=frozenset({2}),
                names="pyproject.toml",
            )
        )
    return cases


def project_corpus(template: Path) -> list[Case]:
    base = (template / INTENT).read_text()
    return (
        intent_value_cases(base)
        + unknown_key_cases(base)
        + toml_syntax_cases(base)
        + hostile_output_cases()
        + lock_damage_cases(template)
        + special_file_cases()
        + cli_cases()
        + pyproject_cases(base)
    )
