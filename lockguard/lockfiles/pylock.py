"""pylock.toml (PEP 751): the standard lock file that uv and pip read, as a fourth view of the
resolution (opt-in through `[outputs] pylock`). One file per platform, like requirements.lock;
lockfiles/pylock_write.py writes it.

`read` is the pure reader the check and the installer use: name, version, hashes and URLs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lockguard.lockfiles.headers import PinEntries
from lockguard.lockfiles.syntax import LockSyntaxError, clip
from lockguard.model import toml_read
from lockguard.model.names import canonical_name
from lockguard.model.toml_errors import toml_error_line

# -- reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PylockEntry:
    """One file of a package: a wheel or the sdist."""

    filename: str
    url: str | None
    hashes: Mapping[str, str]
    size: int | None = None
    path: str | None = None  # a local file instead of a URL (relative to the pylock.toml's folder)


@dataclass(frozen=True, slots=True)
class PylockPackage:
    name: str  # canonical
    version: str
    index: str | None
    files: tuple[PylockEntry, ...]
    line: int | None = None  # the line of its `[[packages]]` header

    @property
    def hashes(self) -> tuple[str, ...]:
        """The sha256 digests of its files (what `pip --require-hashes` would check)."""
        return tuple(sorted({f.hashes["sha256"] for f in self.files if "sha256" in f.hashes}))

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(f.url for f in self.files if f.url)


@dataclass(frozen=True, slots=True)
class PylockFile:
    packages: Mapping[str, PylockPackage] = field(default_factory=dict)
    requires_python: str | None = None
    environments: tuple[str, ...] = ()
    tool: Mapping[str, object] = field(default_factory=dict)  # [tool.lockguard]


_PACKAGES = re.compile(r"^\s*\[\[\s*packages\s*\]\]\s*(#.*)?$")


def pin_entries(text: str) -> PinEntries:
    """name -> (the pinned version, the hashes of its files, its line)."""
    return {
        p.name: (p.version, tuple(sorted(h for f in p.files for h in f.hashes.values())), p.line)
        for p in read(text).packages.values()
    }


def read(text: str) -> PylockFile:
    """Read a pylock.toml back (check, the installer). Strict: a file that is not valid TOML, has no
    packages array, or holds a package that is not a table with a string name and version, or the
    same package twice, is a LockSyntaxError with its line."""
    try:
        data = toml_read.loads(text)
    except toml_read.TOMLDecodeError as exc:
        line, detail = toml_error_line(text, str(exc))
        raise LockSyntaxError(line, f"not valid TOML: {clip(str(exc), 200)}{detail}") from None
    except RecursionError:
        raise LockSyntaxError(None, "not valid TOML: nested too deeply") from None
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if _PACKAGES.match(line)]
    tool = data.get("tool")
    lockguard_tool = tool.get("lockguard") if isinstance(tool, dict) else None
    found: dict[str, PylockPackage] = {}
    out = PylockFile(
        packages=found,
        requires_python=data.get("requires-python")
        if isinstance(data.get("requires-python"), str)
        else None,
        environments=tuple(e for e in data.get("environments") or () if isinstance(e, str)),
        tool=dict(lockguard_tool) if isinstance(lockguard_tool, dict) else {},
    )
    packages = data.get("packages")
    if not isinstance(packages, list):
        raise LockSyntaxError(None, "it has no [[packages]] array")
    for number, package in enumerate(packages):
        line = lines[number] if number < len(lines) else None
        if (
            not isinstance(package, dict)
            or not isinstance(package.get("name"), str)
            or not isinstance(package.get("version"), str)
        ):
            raise LockSyntaxError(
                line, f"package {number + 1} is not a table with a string name and version"
            )
        files = [_entry(w) for w in package.get("wheels") or () if isinstance(w, dict)]
        if isinstance(package.get("sdist"), dict):
            files.append(_entry(package["sdist"]))
        name = canonical_name(package["name"])
        if name in found:
            raise LockSyntaxError(
                line, f"{clip(name)} is listed twice (lines {found[name].line} and {line})"
            )
        found[name] = PylockPackage(
            name, package["version"], package.get("index"), tuple(files), line
        )
    return out


def _entry(item: dict[str, object]) -> PylockEntry:
    url, path, hashes, size = (
        item.get("url"),
        item.get("path"),
        item.get("hashes"),
        item.get("size"),
    )
    url = url if isinstance(url, str) else None
    path = path if isinstance(path, str) else None
    name = item.get("name") or (url.rsplit("/", 1)[-1] if url else "")
    if not name and path:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return PylockEntry(
        str(name),
        url,
        {str(k): str(v) for k, v in hashes.items()} if isinstance(hashes, dict) else {},
        size if isinstance(size, int) else None,
        path,
    )
