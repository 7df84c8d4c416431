"""The checked knowledge, kept between runs: the rows of constraints/*.toml are checked and typed
once, and rebuilt from plain data after.

Checking the ~110 rows into typed values (CUDA and Python versions, GPU archs, specifiers) costs
about a third of an uncached `lockguard check` of its own work, on every commit. The tables are
a function of the knowledge files' text, of `validate` and of lockguard's code, so, like a parse in the
parse memo (io/project/parse_memo.py), they are kept in marshal form under the digest of all of
that: the code by the size and modification time of the modules that type the rows, as Python
checks its bytecode. Plain values (str, int, bool, float, None, tuples, lists, dicts) and the
frozen records of the classes listed in `_classes`, rebuilt by their own constructors: nothing in
a memo can name anything else to call. Anything unexpected (a value of another type, a damaged
entry, an entry that does not rebuild) costs only the build; errors are never kept (a file that
fails its checks raises before anything is stored).
"""

from __future__ import annotations

import os

import lockguard
from lockguard.knowledge import components as c
from lockguard.knowledge import shared_files as sf
from lockguard.knowledge import tables as t
from lockguard.model import names, versions
from lockguard.model.pep440 import Spec

KIND = "knowledge-built"
# the modules whose code makes the typed rows (files under lockguard/): a change to any of them is
# another memo entry
CODE = ("knowledge/loader.py", "knowledge/schema.py", "knowledge/tables.py", "knowledge/components.py",
        "knowledge/shared_files.py",
        "knowledge/built_memo.py", "model/versions.py", "model/pep440.py", "model/names.py", "model/record.py",
        "model/toml_lines.py")


class NotKept(Exception):
    """A value this memo does not keep (the knowledge is then built on every run)."""


def _classes() -> dict[str, type]:
    found = (t.Knowledge, t.TorchRelease, t.TorchPatch, t.ArchRow, t.Toolkit, t.CondaSpecsRow, t.SysrootRow,
             t.LibraryRow, t.PythonNameRow, t.NvccRule, t.GpuRule, t.TorchPinRule, t.Hazard, c.Components,
             c.ComponentRelease, c.ComponentPolicy, sf.WheelFiles, sf.SharedFiles, sf.SeparateFiles,
             versions.CudaVersion, versions.DriverVersion, versions.GpuArch, versions.PythonVersion, names.NamedSpec)
    return {cls.__qualname__: cls for cls in found}


CLASSES = _classes()
# frozen value classes whose fields are numbers, text and tuples of numbers: their nodes can key a
# dict, and their parsers put ints in int fields and bools in bool ones (True == 1 never mixes them up)
_VALUES = frozenset({"CudaVersion", "DriverVersion", "GpuArch", "PythonVersion"})
_NAMES = {cls: name for name, cls in CLASSES.items()}
_SCALARS = (str, int, bool, float)


def code_stamp() -> str | None:
    """Size and modification time of each file in CODE; None when one cannot be stat'ed (a
    lockguard installed without its sources is never answered from the memo)."""
    package = os.path.dirname(os.path.abspath(lockguard.__file__))
    parts = []
    for relative in CODE:
        try:
            info = os.stat(os.path.join(package, relative))
        except OSError:
            return None
        parts.append(f"{relative}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts)


def encode(value):
    """Plain data standing for `value`; a tuple is always a tagged node."""
    kind = type(value)
    if value is None or kind in _SCALARS:
        return value
    if kind is tuple:
        return ("t", tuple([encode(v) for v in value]))
    if kind is list:
        return ("l", [encode(v) for v in value])
    if kind is dict:
        return ("d", tuple([(encode(k), encode(v)) for k, v in value.items()]))
    if kind is Spec:
        kept = value.plain_state()
        if kept is None:
            raise NotKept("a specifier that packaging decides")
        return ("s", kept[0], encode(kept[1]))
    name = _NAMES.get(kind)
    if name is None:
        raise NotKept(f"a {kind.__qualname__}")
    return ("r", name, tuple([encode(getattr(value, f.name)) for f in kind.__record_fields__]))


def decode(item, shared: dict | None = None):
    """The value `encode` stood for. Equal versions and GPU archs (most of the records: the same
    few dozen, named hundreds of times) are made once and shared, as GpuArch.parse shares them:
    frozen values, so no reader can tell."""
    if type(item) is not tuple:
        return item
    tag = item[0]
    if tag == "r":
        if item[1] in _VALUES:
            if shared is None:
                shared = {}
            value = shared.get(item)
            if value is None:
                value = shared[item] = CLASSES[item[1]](*[decode(v, shared) for v in item[2]])
            return value
        return CLASSES[item[1]](*[decode(v, shared) for v in item[2]])
    if tag == "t":
        return tuple([decode(v, shared) for v in item[1]])
    if tag == "l":
        return [decode(v, shared) for v in item[1]]
    if tag == "d":
        return {decode(k, shared): decode(v, shared) for k, v in item[1]}
    if tag == "s":
        return Spec.from_plain_state(item[1], decode(item[2], shared))
    raise ValueError(f"unknown node {tag!r}")


def remembered(memo, texts: list[str], validate: bool, build):
    """build()'s knowledge, or the same tables rebuilt from `memo` when these texts were checked
    and typed (with this `validate` and this code) before."""
    stamp = code_stamp()
    if stamp is None:
        return build()
    key = "\0".join([stamp, f"validate={validate}", *texts])
    built = []

    def build_plain(_key: str):
        built.append(build())
        return encode(built[0])

    try:
        data = memo(KIND, key, build_plain)
    except NotKept:
        return built[0]
    if built:
        return built[0]
    try:
        return decode(data, {})
    except Exception:  # a damaged or foreign entry: built again, as if there were none
        return build()
