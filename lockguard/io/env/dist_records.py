"""What the dist-infos, .pth files and conda-meta records of an environment say: each RECORD's
paths (in or out of the prefix, rows that name a folder), sizes and hashes, METADATA's name and
version, and the files two distributions overwrote. Regular files only, read with bounds."""

from __future__ import annotations

import base64
import csv
import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from lockguard.errors import InputError
from lockguard.io.env.egg_info import egg_info_dists
from lockguard.io.env.scan_memo import Memo, file_key
from lockguard.io.read import (
    MIB,
    read_env_bytes,
    read_env_text,
    read_head,
    regular_file_sha256,
)
from lockguard.model.names import INSTALLER_TOOLS, canonical_name
from lockguard.model.prefix import (
    SHARED_LIBRARY,
    CondaInstalled,
    InstalledDist,
    PrefixSnapshot,
    PthFile,
    RecordEntry,
    Unrecorded,
    relative_path,
)

RECORD_LIMIT = 64 * MIB  # torch's RECORD is about 2 MB
METADATA_HEAD = 1 * MIB  # only the header block is read; a long description may follow
PTH_LIMIT = 1 * MIB
CONDA_RECORD_LIMIT = 64 * MIB


class ParsedDistInfo(NamedTuple):
    """What a dist-info's METADATA, INSTALLER and RECORD say (no name: not a distribution)."""

    name: str  # canonical
    version: str
    installer: str
    requires: tuple[str, ...]  # of the installer tools only
    inside: tuple[str, ...]
    outside: tuple[str, ...]
    sizes: tuple[tuple[str, int], ...]


_DIST_INFO_FILES = ("METADATA", "INSTALLER", "RECORD")


def dists_in(site: str, root: Path, sizes: dict[str, list[tuple[str, int]]]) -> list[InstalledDist]:
    out: list[InstalledDist] = []
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return out
    in_prefix = site.startswith(str(root) + os.sep)
    memo = Memo("dist-info", f"{root}\0{site}", ParsedDistInfo)
    for name in names:
        if not name.endswith(".dist-info"):
            continue
        info = os.path.join(site, name)
        # before reading
        keys = tuple(file_key(os.path.join(info, file)) for file in _DIST_INFO_FILES)
        found, parsed = memo.get(name, keys)
        if not found:
            parsed = parse_dist_info(info, site, root)
            memo.put(name, keys, parsed)
        if not parsed.name:
            continue
        sizes[info] = list(parsed.sizes)
        out.append(
            InstalledDist(
                name=parsed.name,
                version=parsed.version,
                site=site,
                dist_info=info,
                installer=parsed.installer,
                paths=parsed.inside,
                outside=parsed.outside,
                in_prefix=in_prefix,
                requires=parsed.requires,
            )
        )
    memo.save()
    if any(name.endswith(".egg-info") for name in names):
        out += egg_info_dists(site, root, names, _metadata)
    return out


def parse_dist_info(info: str, site: str, root: Path) -> ParsedDistInfo:
    meta = _metadata(os.path.join(info, "METADATA"))
    if not meta.get("name"):
        return ParsedDistInfo("", "", "", (), (), (), ())
    inside, outside, sizes = _records(os.path.join(info, "RECORD"), site, root)
    dist_name = canonical_name(meta["name"])
    return ParsedDistInfo(
        dist_name,
        meta.get("version", ""),
        _head(os.path.join(info, "INSTALLER"), 256).strip(),
        tuple(meta.get("requires", ())) if dist_name in INSTALLER_TOOLS else (),
        inside,
        outside,
        tuple(sizes),
    )


def _metadata(path: str) -> dict:
    out: dict = {}
    text = _head(path)
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key in ("Name", "Version") and key.lower() not in out:
            out[key.lower()] = value.strip()
        elif key == "Requires-Dist":
            out.setdefault("requires", []).append(value.strip())
    return out


def _head(path: str, size: int = METADATA_HEAD) -> str:
    """The first `size` bytes of a regular file (the header block of a METADATA)."""
    try:
        return read_head(path, size).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except PermissionError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", file=path) from None


def _records(
    path: str, site: str, root: Path
) -> tuple[tuple[str, ...], tuple[str, ...], list[tuple[str, int]]]:
    """(paths inside the prefix, relative; entries pointing outside it, as written; (path, size)
    of its shared libraries, to compare with what is installed)."""
    root_s = str(root)
    inside_site = site.startswith(root_s + os.sep)
    site_rel = site[len(root_s) + 1 :] + "/" if inside_site else ""
    text = read_env_text(path, RECORD_LIMIT)
    quoted = '"' in text
    if quoted:
        rows = [row for row in _csv_rows(text, path) if row and row[0]]
        names = [row[0] for row in rows]
    else:
        names = [n for n in (line.split(",", 1)[0] for line in text.splitlines()) if n]
    # the common case: every name is plain, seen on the whole text at once (hashes are base64url)
    if inside_site and not quoted and not _odd(text):
        plain = names
    else:
        plain = [n for n in names if inside_site and _plain(n)]
    inside = [site_rel + n for n in plain]  # no path arithmetic at all
    outside = []
    if len(plain) != len(names):
        for raw in names:
            if inside_site and _plain(raw):
                continue
            absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(site, raw))
            # `.`, `..`, `lib/` name a folder (the site itself, one above it), never a file: an
            # invalid row (LG219), not a file found missing
            folder = raw.endswith("/") or absolute == site or site.startswith(absolute + os.sep)
            if absolute.startswith(root_s + os.sep) and not folder:
                inside.append(absolute[len(root_s) + 1 :])
            else:
                outside.append(raw)
    if text.startswith(",") or "\n," in text:
        # a row with no path (`,,`) names nothing: an invalid row (LG219), kept as "" (a blank
        # line is no row)
        outside += [""] * sum(1 for line in text.splitlines() if line.startswith(","))
    sizes = []
    if inside_site and ".so" in text:
        rows = rows if quoted else [line.split(",") for line in _lines_with(text, ".so")]
        for row in rows:
            if (
                len(row) > 2
                and row[2].strip().isdigit()
                and SHARED_LIBRARY.search(row[0])
                and _plain(row[0])
            ):
                sizes.append((site_rel + row[0], int(row[2])))
    return tuple(inside), tuple(outside), sizes


def _lines_with(text: str, needle: str) -> list[str]:
    """The lines of a text that contain `needle`, found by searching for it (a RECORD has a few
    shared libraries among thousands of lines: no split of the whole text)."""
    out = []
    at = text.find(needle)
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        out.append(text[start:end].rstrip("\r"))
        at = text.find(needle, end)
    return out


def _odd(text: str) -> bool:
    """Whether any name of a RECORD text may need normalizing (substring tests run at C speed)."""
    return (
        text.startswith(("/", ".,", "..,"))
        or "\n/" in text
        or "\n.," in text
        or "\n..," in text
        or "/..," in text
        or "./" in text
        or "\\" in text
        or "//" in text
        or "/," in text
        or "/.," in text
    )


def _plain(name: str) -> bool:
    """A RECORD path that needs no normalizing: relative, no `.`/`..` parts, no empty parts."""
    return (
        name[0] != "/"
        and "./" not in name
        and "\\" not in name
        and "//" not in name
        and not name.endswith(("/", "/.", "/.."))
        and name not in (".", "..")
    )


def _record_rows(text: str, path: str = "RECORD"):
    return _csv_rows(text, path) if '"' in text else (line.split(",") for line in text.splitlines())


def _csv_rows(text: str, path: str) -> list[list[str]]:
    """The rows of a quoted RECORD; a RECORD the csv module refuses (a field over its 131,072
    characters, a stray quote) is damage, named with its line, never a crash."""
    reader = csv.reader(text.splitlines())
    try:
        return list(reader)
    except csv.Error as exc:
        raise InputError(
            f"{path}:{reader.line_num}: this RECORD cannot be read ({exc})",
            file=path,
            line=reader.line_num,
            hint="the distribution's RECORD is damaged: reinstall it (pip install "
            "--force-reinstall --no-deps NAME==VERSION), or remove its .dist-info folder",
        ) from None


def absent_files(
    snap: PrefixSnapshot,
    root: Path,
    listed: tuple[str, ...],
    sizes: dict[str, list[tuple[str, int]]],
    listed_sizes: dict[str, int],
) -> None:
    """Which RECORD entries of the prefix's distributions are missing, and which shared libraries
    have another size than their RECORD says: a set lookup in the listing where it covers the path,
    a stat elsewhere (bin/, include/, share/)."""
    present = set(snap.files)
    # what no RECORD lists: the inventory's unowned files, found on the way
    unrecorded = set(present)
    for i, dist in enumerate(snap.dists):
        if not dist.in_prefix:
            continue
        absent: tuple[str, ...] = ()
        before = len(unrecorded)
        # in C; removing as many as it lists: all are listed
        unrecorded.difference_update(dist.paths)
        if before - len(unrecorded) != len(dist.paths) and not present.issuperset(dist.paths):
            unlisted = [p for p in dist.paths if p not in present]
            absent = tuple(
                p for p in unlisted if p.startswith(listed) or not os.path.lexists(f"{root}/{p}")
            )
            # a row naming a folder that exists (`lib`, no slash) lists no file: an invalid row
            # (LG219), never a file to quarantine with its distribution nor one found missing
            folders = tuple(p for p in unlisted if _is_folder(f"{root}/{p}"))
            if folders:
                absent = tuple(p for p in absent if p not in folders)
                dist = _replace(
                    dist,
                    paths=tuple(p for p in dist.paths if p not in folders),
                    folder_rows=tuple(relative_path(f"{root}/{p}", dist.site) for p in folders),
                )
                snap.dists[i] = dist
        resized = []
        for path, size in sizes.get(dist.dist_info, ()):
            if path in present and path not in snap.symlinks:
                try:
                    actual = listed_sizes.get(path)
                    if (os.lstat(f"{root}/{path}").st_size if actual is None else actual) != size:
                        resized.append(path)
                except OSError:
                    pass
        if absent or resized:
            snap.dists[i] = _replace(dist, absent=absent, resized=tuple(resized))
    snap.unrecorded = Unrecorded(len(snap.files), len(snap.dists), unrecorded)


def _is_folder(path: str) -> bool:
    """A real folder (a link to one is a file of the RECORD: LG220 judges where it points)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL byte in the row
        return False


# files hashed per copy to tell which of two .dist-info of one name wrote the files on disk
_OVERWRITE_SAMPLE = 8
_OVERWRITE_FILE_LIMIT = 64 * MIB


def mark_overwritten(dists: list[InstalledDist], root: str) -> list[InstalledDist]:
    """Two .dist-info of one distribution in one folder (`pip install --ignore-installed` over an
    installed version) share paths: the bytes there are the last install's. For each copy, the
    paths both RECORDs list with different digests are hashed (a few, .py files first); a copy
    whose digest lost to another's records them as `overwritten`."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, dist in enumerate(dists):
        if not dist.legacy:
            groups.setdefault((dist.site, dist.name), []).append(index)
    out = list(dists)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        digests = {i: _digests(dists[i], root) for i in indices}
        on_disk: dict[str, str | None] = {}
        for i in indices:
            mine = digests[i]
            others = [digests[j] for j in indices if j != i]
            differing = sorted(
                (p for p, d in mine.items() if any(o.get(p) not in (None, d) for o in others)),
                key=lambda p: (not p.endswith(".py"), p),
            )[:_OVERWRITE_SAMPLE]
            lost = []
            for path in differing:
                if path not in on_disk:
                    on_disk[path] = _file_digest(os.path.join(root, path))
                actual = on_disk[path]
                if actual != mine[path] and any(o.get(path) == actual for o in others):
                    lost.append(path)
            if lost:
                out[i] = _replace(dists[i], overwritten=tuple(lost))
    return out


def _digests(dist: InstalledDist, root: str) -> dict[str, str]:
    """RECORD path (relative to the prefix) -> its sha256, for the entries inside the prefix."""
    try:
        entries = record_entries(dist, root)
    except InputError:
        return {}
    return {e.path: e.sha256 for e in entries if e.sha256 and not e.outside}


def _file_digest(path: str) -> str | None:
    """The sha256 of a regular file as RECORD writes it (urlsafe base64, no padding), or None."""
    try:
        if os.stat(path).st_size > _OVERWRITE_FILE_LIMIT:
            return None
        digest = regular_file_sha256(path).digest()
    except (OSError, InputError):
        return None
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _replace(dist: InstalledDist, **changes) -> InstalledDist:
    return replace(dist, **changes)


def record_entries(dist: InstalledDist, root: str) -> list[RecordEntry]:
    """The RECORD of a distribution with its digests (for --verify-files)."""
    out = []
    for row in _record_rows(read_env_text(dist.record_file, RECORD_LIMIT), dist.record_file):
        if not row or not row[0]:
            continue
        raw = row[0]
        absolute = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(dist.site, raw))
        digest = row[1][7:] if len(row) > 1 and row[1].startswith("sha256=") else None
        inside = absolute.startswith(root + os.sep)
        out.append(
            RecordEntry(absolute[len(root) + 1 :] if inside else absolute, digest, not inside, raw)
        )
    return out


def pth_files(site: str) -> list[PthFile]:
    out: list[PthFile] = []
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".pth"))
    except OSError:
        return out
    for name in names:
        injected = []
        for line in read_env_text(os.path.join(site, name), PTH_LIMIT).splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            directory = line if os.path.isabs(line) else os.path.join(site, line)
            injected.append(os.path.normpath(directory))
        if injected:
            out.append(
                PthFile(
                    os.path.join(site, name),
                    tuple(injected),
                    existing=tuple(d for d in injected if os.path.isdir(d)),
                )
            )
    return out


def conda_records(root: Path) -> list[CondaInstalled]:
    """conda-meta/*.json; a record that is not a JSON object with a text name, version and build
    and a list of file paths is bad input naming the file (conda itself would fail on it)."""
    meta = root / "conda-meta"
    out: list[CondaInstalled] = []
    if not meta.is_dir():
        return out
    for path in sorted(meta.glob("*.json")):
        try:  # conda writes its records as UTF-8 JSON and fails on anything else
            data = json.loads(
                read_env_bytes(path, CONDA_RECORD_LIMIT, missing_ok=False).decode("utf-8")
            )
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise InputError(
                f"{path} is not valid UTF-8 JSON ({str(exc)[:200]})",
                file=str(path),
                hint="a damaged conda record: reinstall that package with conda, "
                "or move the file away",
            ) from None
        files = data.get("files") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("name"), str)
            or not isinstance(data.get("version", ""), (str, int, float))
            or not isinstance(data.get("build", ""), str)
            or not (
                files is None or isinstance(files, list) and all(isinstance(f, str) for f in files)
            )
        ):
            raise InputError(
                f"{path} is not a conda package record (a JSON object with text name, version, "
                "build and a list of files)",
                file=str(path),
                hint="a damaged conda record: reinstall that package with conda, "
                "or move the file away",
            )
        out.append(
            CondaInstalled(
                data["name"],
                str(data.get("version", "")),
                str(data.get("build", "")),
                tuple(files or ()),
            )
        )
    return out
