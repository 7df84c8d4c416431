"""Legacy `.egg-info` installs read as installed distributions.

pip before 23.1 installs a project that has no pyproject.toml, when the `wheel` package is
missing, by running `setup.py install` (Python 3.10's bundled pip 23.0.1 in a fresh venv, Ubuntu
20.04's pip): setuptools writes NAME-VERSION-pyX.Y.egg-info/ (PKG-INFO, top_level.txt, ...) and no
RECORD; pip then lists what was installed in installed-files.txt, relative to that folder.
`setup.py install --single-version-externally-managed` run by hand writes the same folder without
that list. So a distribution's files are what installed-files.txt lists where it exists, else are
inferred: everything under the folders, and the modules, that top_level.txt names (never a name
in namespace_packages.txt, which other distributions share) and the .egg-info folder itself.

The single-file form (distutils' NAME-VERSION-pyX.Y.egg-info as a file) names no files at all and
is left alone. Reads only, like the rest of the scan: regular files, with bounds."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from lockguard.io.read import MIB, read_env_text
from lockguard.model.names import canonical_name
from lockguard.model.prefix import InstalledDist, PrefixSnapshot

LISTING_LIMIT = 64 * MIB
NAMES_LIMIT = 1 * MIB


def egg_info_dists(
    site: str, root: Path, names: list[str], read_metadata: Callable[[str], dict]
) -> list[InstalledDist]:
    """The .egg-info folders among `names` (the entries of `site`) as distributions."""
    out = []
    in_prefix = site.startswith(str(root) + os.sep)
    for name in names:
        if not name.endswith(".egg-info"):
            continue
        info = os.path.join(site, name)
        if os.path.islink(info) or not os.path.isdir(info):
            continue
        meta = read_metadata(os.path.join(info, "PKG-INFO"))
        if not meta.get("name"):
            continue
        listing = read_env_text(os.path.join(info, "installed-files.txt"), LISTING_LIMIT)
        if listing.strip():
            inside, outside = _listed(listing, info, str(root))
            ownership = "installed-files.txt"
        else:
            inside, outside = _inferred(info, site, str(root)), ()
            ownership = "top-level names"
        out.append(
            InstalledDist(
                name=canonical_name(meta["name"]),
                version=meta.get("version", ""),
                site=site,
                dist_info=info,
                paths=inside,
                outside=outside,
                in_prefix=in_prefix,
                ownership=ownership,
            )
        )
    return out


def _listed(text: str, info: str, root: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """installed-files.txt: one path a line, relative to the .egg-info folder (`../torch/x.py`)."""
    inside, outside = [], []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        absolute = os.path.normpath(line if os.path.isabs(line) else os.path.join(info, line))
        if absolute.startswith(root + os.sep):
            inside.append(absolute[len(root) + 1 :])
        else:
            outside.append(line)
    return tuple(dict.fromkeys(inside)), tuple(outside)


def _inferred(info: str, site: str, root: str) -> tuple[str, ...]:
    """Every file under the top-level folders top_level.txt names, its modules (NAME.py,
    NAME.*.so and their bytecode), and the .egg-info folder's own files."""
    tops = _names(os.path.join(info, "top_level.txt"))
    shared = set(_names(os.path.join(info, "namespace_packages.txt")))
    found: list[str] = _files_under(info)
    for top in tops:
        if top in shared or not top.isidentifier():
            continue
        folder = os.path.join(site, top)
        if os.path.isdir(folder) and not os.path.islink(folder):
            found += _files_under(folder)
        found += _modules(site, top)
    return tuple(
        dict.fromkeys(path[len(root) + 1 :] for path in found if path.startswith(root + os.sep))
    )


def _names(path: str) -> list[str]:
    return [line.strip() for line in read_env_text(path, NAMES_LIMIT).splitlines() if line.strip()]


def _files_under(folder: str) -> list[str]:
    out = []
    for base, dirs, files in os.walk(folder):
        links = [
            d for d in dirs if os.path.islink(os.path.join(base, d))
        ]  # listed as files, never entered
        dirs[:] = [d for d in dirs if d not in links]
        out += [os.path.join(base, name) for name in (*files, *links)]
    return out


def _modules(site: str, top: str) -> list[str]:
    """NAME.py, NAME.cpython-310-x86_64-linux-gnu.so and the like, with __pycache__/NAME.*.pyc."""
    out = []
    for folder, prefix in ((site, top + "."), (os.path.join(site, "__pycache__"), top + ".")):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.startswith(prefix) and entry.endswith((".py", ".pyc", ".so", ".pyd")):
                out.append(os.path.join(folder, entry))
    return out


def mark_conda_owned(snap: PrefixSnapshot, root: Path) -> None:
    """A legacy .egg-info that a conda record lists is the conda side's (as a dist-info whose
    INSTALLER says conda is), never a pip package to replace."""
    conda_files = {os.path.normpath(f) for record in snap.conda for f in record.files}
    for i, dist in enumerate(snap.dists):
        if (
            dist.legacy
            and os.path.relpath(os.path.join(dist.dist_info, "PKG-INFO"), root) in conda_files
        ):
            snap.dists[i] = replace(dist, installer="conda")
