"""Lock file texts as the change report's views (check/lock_changes.py): per platform, the pip
pins and the conda records. Each kind of lock file gives what it holds: requirements.lock and
pylock.toml the pip side, environment.yml both sides, conda-lock.yml both sides of every platform.
Pure: parse errors are LockSyntaxError (with the line) for the caller to report.
"""

from __future__ import annotations

from lockguard.check.lock_changes import LockView
from lockguard.lockfiles import conda_lock, environment_yml, pylock, requirements_lock
from lockguard.lockfiles.headers import read_header
from lockguard.model.names import canonical_name

KINDS = ("requirements", "environment", "conda-lock", "pylock")


def kind_of(filename: str, text: str) -> str:
    """Which kind of lock file `text` is: by its name first (as [outputs] names them by default),
    then by what it looks like."""
    name = filename.rsplit("/", 1)[-1].lower()
    if name.startswith("conda-lock") and name.endswith((".yml", ".yaml")):
        return "conda-lock"
    if name.startswith("pylock") and name.endswith(".toml"):
        return "pylock"
    if name.endswith((".yml", ".yaml")):
        return "conda-lock" if "\npackage:" in text and "\nmetadata:" in text else "environment"
    if name.endswith(".toml"):
        return "pylock"
    return "requirements"


def views_of(kind: str, text: str, platform: str | None = None) -> dict[str, LockView]:
    """The views one lock file gives, by platform (`platform`: what to call a file that does not
    say; the header's `lockguard-platform` wins; else linux-64, every intent's default)."""
    said = read_header(text).fields.get("platform") or platform or "linux-64"
    if kind == "requirements":
        entries = requirements_lock.parse(text).entries
        return {said: LockView(said, {n: e.version for n, e in entries.items()})}
    if kind == "environment":
        env = environment_yml.parse(text)
        return {
            said: LockView(
                said,
                {n: v for n, (v, _line) in env.pip.items()},
                {n: (v, b or "") for n, (v, b, _line) in env.conda.items()},
            )
        }
    if kind == "pylock":
        lock = pylock.read(text)
        where = str(lock.tool.get("platform") or said)
        return {where: LockView(where, {n: p.version for n, p in lock.packages.items()})}
    if kind == "conda-lock":
        pip: dict[str, dict[str, str]] = {}
        conda: dict[str, dict[str, tuple[str, str]]] = {}
        for package in conda_lock.read(text)["package"]:
            where = str(package["platform"])
            name, version = str(package["name"]), str(package["version"])
            if package["manager"] == "pip":
                pip.setdefault(where, {})[canonical_name(name)] = version
            else:
                conda.setdefault(where, {})[name] = (version, str(package.get("build") or ""))
        return {
            p: LockView(p, pip.get(p, {}), conda.get(p, {})) for p in sorted(set(pip) | set(conda))
        }
    raise KeyError(kind)


def merged(*views: dict[str, LockView]) -> dict[str, LockView]:
    """One view per platform from several files (requirements.lock's pip side and environment.yml's
    conda side of one platform): a side a file holds replaces the same side of the earlier ones."""
    out: dict[str, LockView] = {}
    for found in views:
        for platform, view in found.items():
            before = out.get(platform)
            if before is None:
                out[platform] = view
            else:
                out[platform] = LockView(
                    platform, before.pip or view.pip, view.conda or before.conda
                )
    return out
