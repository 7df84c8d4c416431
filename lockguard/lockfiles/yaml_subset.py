"""Does a text fit the small subset of YAML that PyYAML's block style emits for a lock file?

`lockguard check` runs on every commit and PyYAML's import alone costs a third of its time
budget, so the files lockguard wrote are read line by line. That is only safe when the text is
known to be YAML whose meaning the line reader gets right: this module answers exactly that, and
every "no" sends the file through the full YAML parser (never a wrong answer, only a slower one).

The subset: `key: scalar`, `key:` opening a nested mapping (indent + 2) or a block sequence (same
indent or + 2, PyYAML's compact style), `- scalar`, `- key: ...` opening a mapping inside a
sequence, `{}` and `[]`, plain scalars without spaces or indicators, single-quoted scalars,
comment lines at column 0; no duplicate keys in a mapping.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"^(?P<ind> *)(?P<dash>- )?(?:(?P<key>[A-Za-z_][A-Za-z0-9_.-]*):(?: (?P<val>\S.*))?|(?P<item>\S.*))$")
_PLAIN = re.compile(r"[A-Za-z0-9_./+~=<^$(][^\s]*")
_QUOTED = re.compile(r"'(?:[^']|'')*'")


def scalar_ok(value: str) -> bool:
    if value in ("{}", "[]"):
        return True
    if _QUOTED.fullmatch(value):
        return True
    return bool(_PLAIN.fullmatch(value)) and not value.endswith(":")


def fits(lines: list[str]) -> bool:
    blocks: list[list] = []  # open containers: [indent, "map" | "seq", keys seen]
    pending: int | None = None  # indent of a `key:` whose nested block must start on the next line
    for line in lines:
        if not line or line.startswith("#"):
            if line and blocks:
                return False  # comments only before the document
            continue
        match = _LINE.match(line)
        if not match:
            return False
        indent = len(match["ind"])
        dash = match["dash"] is not None
        if pending is not None:
            if dash and indent in (pending, pending + 2):
                blocks.append([indent, "seq", None])
            elif not dash and indent == pending + 2:
                blocks.append([indent, "map", set()])
            else:
                return False
            pending = None
        elif not blocks:
            if dash or indent:
                return False
            blocks.append([0, "map", set()])
        else:
            want = "seq" if dash else "map"
            # close deeper blocks; a sequence at its key's own indent (PyYAML's compact style)
            # closes when that mapping's next key arrives
            while blocks and (blocks[-1][0] > indent or (blocks[-1][0] == indent and blocks[-1][1] != want)):
                blocks.pop()
            if not blocks or blocks[-1][0] != indent or blocks[-1][1] != want:
                return False
        key, value, item = match["key"], match["val"], match["item"]
        if dash:
            if key is None:
                if not scalar_ok(item):
                    return False
                continue
            blocks.append([indent + 2, "map", set()])  # `- key: ...` opens a mapping at indent + 2
            indent += 2
        elif key is None:
            return False  # a bare scalar inside a mapping
        keys = blocks[-1][2]
        if key in keys:
            return False  # a duplicate key: the full parser reports it
        keys.add(key)
        if value is None:
            pending = indent
        elif not scalar_ok(value):
            return False
    return pending is None and bool(blocks)
