"""What a downloaded wheel holds: its member names, Root-Is-Purelib and entry-point scripts, read
from the zip's central directory (no member is extracted). Bounded: a wheel's small metadata
files are read only up to a size limit."""

from __future__ import annotations

import zipfile
from pathlib import Path

from lockguard.errors import InstallFailed
from lockguard.install.incoming import WheelContents
from lockguard.model.names import canonical_name

_SMALL = 1 << 20
_MEMBERS = 2_000_000


def _small(archive: zipfile.ZipFile, name: str) -> str:
    info = archive.getinfo(name)
    if info.file_size > _SMALL:
        return ""
    return archive.read(info).decode("utf-8", "replace")


def _scripts(text: str) -> tuple[str, ...]:
    """console_scripts and gui_scripts names of an entry_points.txt (an INI file)."""
    out, section = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section in ("console_scripts", "gui_scripts") and "=" in line and not line.startswith(("#", ";")):
            out.append(line.split("=", 1)[0].strip())
    return tuple(name for name in out if name and "/" not in name)


def read_wheel(path: Path) -> WheelContents:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        name, version, _build, _tags = parse_wheel_filename(path.name)
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > _MEMBERS:
                raise InstallFailed(f"{path.name} has {len(infos)} members; refusing to plan it")
            members = tuple(info.filename for info in infos)
            info_dirs = {m.split("/", 1)[0] for m in members if m.split("/", 1)[0].endswith(".dist-info")}
            wheel_text = entry_text = ""
            for folder in sorted(info_dirs):
                if f"{folder}/WHEEL" in members:
                    wheel_text = _small(archive, f"{folder}/WHEEL")
                if f"{folder}/entry_points.txt" in members:
                    entry_text = _small(archive, f"{folder}/entry_points.txt")
    except (OSError, zipfile.BadZipFile, InvalidWheelFilename, KeyError) as exc:
        raise InstallFailed(f"cannot read the downloaded wheel {path.name}: {exc}",
                            hint="nothing in the environment was changed; run clean-install again") from None
    purelib = any(line.split(":", 1)[1].strip().lower() == "true"
                  for line in wheel_text.splitlines() if line.lower().startswith("root-is-purelib:"))
    return WheelContents(canonical_name(str(name)), str(version), path.name, members, purelib, _scripts(entry_text))
