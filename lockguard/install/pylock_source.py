"""`clean-install --from pylock.toml`: a PEP 751 lock as the source of what pip installs. Pure.

pip gets the same requirements file as from requirements.lock: `name==version` with every sha256
of the package's files, so pip --require-hashes accepts only those bytes. Where pip finds the files:
the packages' indexes (`index`, optional in PEP 751) and a links page listing every file the lock
names by URL or local path (uv writes URLs only), from which pip picks the file that fits the
target interpreter. A package lockguard cannot install that way (no hashed wheel or sdist: a VCS,
directory or archive source) is refused before anything changes, with its line.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from lockguard.errors import InputError
from lockguard.lockfiles.pylock import PylockFile
from lockguard.lockfiles.requirements_lock import LockedRequirement, RequirementsLock


@dataclass
class PylockInstall:
    requirements: RequirementsLock  # name==version with hashes, index options
    links: list[str] = field(default_factory=list)  # file URLs, each with its #sha256= fragment


def install_from_pylock(pylock: PylockFile, path: str, folder: str) -> PylockInstall:
    """The install entries of a pylock.toml (`folder` is its own, for relative `path` entries)."""
    entries: dict[str, LockedRequirement] = {}
    links: list[str] = []
    indexes: list[str] = []
    for package in pylock.packages.values():
        where = f"{path}:{package.line}" if package.line else path
        if not package.hashes:
            raise InputError(
                f"{where}: {package.name} {package.version} has no wheel or sdist "
                "with a sha256 hash",
                file=path,
                line=package.line,
                hint="clean-install installs only hashed files from an index "
                "(pip --require-hashes); lock it from an index "
                "(e.g. `uv pip compile -o pylock.toml`) or leave it out",
            )
        entries[package.name] = LockedRequirement(
            package.name, package.version, package.hashes, (), package.line or 0
        )
        if package.index and package.index not in indexes:
            indexes.append(package.index)
        for file in package.files:
            location = file.url or (_file_url(file.path, folder) if file.path else None)
            if location and "sha256" in file.hashes:
                links.append(f"{location}#sha256={file.hashes['sha256']}")
        if not package.index and not any(f.url or f.path for f in package.files):
            raise InputError(
                f"{where}: {package.name} {package.version} names neither an index nor a URL "
                "or path for its files",
                file=path,
                line=package.line,
                hint="pip needs to know where to download it: add `index` or the files' `url`",
            )
    index_url = indexes[0] if indexes else None
    return PylockInstall(RequirementsLock(entries, index_url, tuple(indexes[1:])), links)


def links_page(links: list[str]) -> str:
    """An HTML page pip reads with --find-links (PEP 503's anchor form)."""
    rows = [
        f'<a href="{html.escape(url, quote=True)}">'
        f"{html.escape(url.split('#', 1)[0].rsplit('/', 1)[-1])}</a><br>"
        for url in links
    ]
    return "<!DOCTYPE html>\n<html><body>\n" + "\n".join(rows) + "\n</body></html>\n"


def _file_url(path: str, folder: str) -> str:
    full = path if path.startswith("/") else posixpath.normpath(posixpath.join(folder, path))
    return "file://" + quote(full)


def disagreements(pylock: PylockFile, locked: Mapping[str, str]) -> list[str]:
    """Where a pylock.toml and the project's lock pin different things
    ("torch 2.1.1 (the lock: 2.1.2)")."""
    pins = {p.name: p.version for p in pylock.packages.values()}
    out = []
    for name in sorted(set(pins) | set(locked)):
        mine, theirs = pins.get(name), locked.get(name)
        if mine != theirs:
            out.append(f"{name} {mine or 'absent'} (the lock: {theirs or 'absent'})")
    return out
