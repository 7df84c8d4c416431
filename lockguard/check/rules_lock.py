"""Rules about the lock files themselves: present, current, untouched, and agreeing with each other.

LG100 a lock file is missing            LG104 not a lockguard file (no header)
LG101 the intent changed since the lock LG110 pip pins differ between the views
LG102 a lock file was edited by hand    LG111 conda records differ between the views
(pylock.toml, when the intent asks for it, is one more view: LG100-LG104 and LG110 cover it)
LG140 (--strict) conda side pinned from knowledge only
LG141 (--strict) a pin without hashes
"""

from __future__ import annotations

from lockguard.check.snapshot import LockFile, Snapshot
from lockguard.lockfiles.headers import body_hash_of
from lockguard.model.finding import ERROR, WARNING, Finding

RELOCK = "run `lockguard resolve` and commit the lock files it writes"


def lock_state(snapshot: Snapshot) -> list[Finding]:
    out: list[Finding] = []
    for lock in snapshot.files:
        if lock.text is None:
            out.append(Finding("LG100", ERROR, f"{lock.path} is missing", RELOCK, lock.path))
            continue
        header = lock.header
        if header is None or header.intent_hash is None:
            out.append(Finding("LG104", ERROR, f"{lock.path} has no lockguard header: it was not written by lockguard",
                               RELOCK, lock.path, 1))
            continue
        if header.intent_hash != snapshot.intent.hash:
            out.append(Finding("LG101", ERROR,
                               f"{snapshot.intent_file} changed since {lock.path} was written (intent hash "
                               f"{header.intent_hash[:12]} in the lock, {snapshot.intent.hash[:12]} now)",
                               RELOCK, lock.path, _line_of(lock.text, "lockguard-intent-hash")))
        if header.body_hash != body_hash_of(lock.text):
            edited = _edited_entries(snapshot, lock)
            detail = f"; entries that differ from the other lock files: {', '.join(edited)}" if edited else ""
            out.append(Finding("LG102", ERROR, f"{lock.path} was edited by hand (its body hash does not match){detail}",
                               "do not edit lock files: change the intent and " + RELOCK, lock.path,
                               _first_edited_line(lock, edited)))
    return out


def views_agree(snapshot: Snapshot) -> list[Finding]:
    """environment.yml's pip section, requirements.lock, conda-lock.yml and pylock.toml hold the same
    pins; the conda records of environment.yml and conda-lock.yml are the same."""
    out: list[Finding] = []
    conda_lock = snapshot.of_kind("conda-lock")
    for platform in snapshot.intent.platforms:
        requirements = snapshot.of_kind("requirements", platform)
        environment = snapshot.of_kind("environment", platform)
        req_pins = _pins(requirements)
        views = {}
        if environment and environment.environment:
            views[environment.path] = ({n: v for n, (v, _l) in environment.environment.pip.items()},
                                       {n: line for n, (_v, line) in environment.environment.pip.items()})
        if conda_lock and conda_lock.conda_lock is not None:
            views[conda_lock.path] = (_conda_lock_packages(conda_lock.conda_lock, "pip", platform), {})
        pylock = snapshot.of_kind("pylock", platform)
        if pylock and pylock.pylock is not None:
            views[pylock.path] = _pylock_pins(pylock)
        if req_pins is not None:
            for path, (pins, lines) in views.items():
                for name in sorted(set(pins) | set(req_pins)):
                    if pins.get(name) != req_pins.get(name):
                        out.append(Finding(
                            "LG110", ERROR,
                            f"{name}: {requirements.path} has {_show(req_pins.get(name))}, {path} has {_show(pins.get(name))}",
                            RELOCK, path, lines.get(name)))
        if environment and environment.environment and conda_lock and conda_lock.conda_lock is not None \
                and _conda_solved(environment):
            env_conda = {n: f"{v}={b}" for n, (v, b, _l) in environment.environment.conda.items() if b}
            lock_conda = _conda_lock_packages(conda_lock.conda_lock, "conda", platform, with_build=True)
            lines = {n: line for n, (_v, _b, line) in environment.environment.conda.items()}
            for name in sorted(set(env_conda) | set(lock_conda)):
                if env_conda.get(name) != lock_conda.get(name):
                    out.append(Finding(
                        "LG111", ERROR,
                        f"{name}: {environment.path} has {_show(env_conda.get(name))}, {conda_lock.path} has "
                        f"{_show(lock_conda.get(name))}", RELOCK, environment.path, lines.get(name)))
    return out


def strict(snapshot: Snapshot) -> list[Finding]:
    out: list[Finding] = []
    for lock in snapshot.files:
        if lock.text is None or lock.header is None:
            continue
        if lock.kind == "environment" and not lock.header.conda_solved:
            out.append(Finding("LG140", WARNING,
                               f"the conda side of {lock.path} was pinned from lockguard's knowledge, not solved "
                               "(versions only, no builds or hashes)",
                               "run `lockguard resolve` where the intent's channels can be reached",
                               lock.path, _line_of(lock.text, "lockguard-conda-side")))
        if lock.kind == "requirements" and lock.requirements:
            for entry in lock.requirements.entries.values():
                if not entry.hashes:
                    out.append(Finding("LG141", WARNING, f"{entry.name}=={entry.version} has no --hash",
                                       "its index gives no sha256; pip --require-hashes will refuse it",
                                       lock.path, entry.line))
    return out


# -- helpers -----------------------------------------------------------------------------------------

def _pins(lock: LockFile | None) -> dict[str, str] | None:
    if lock is None or lock.requirements is None:
        return None
    return {n: e.version for n, e in lock.requirements.entries.items()}


def _pylock_pins(lock: LockFile) -> tuple[dict[str, str], dict[str, int]]:
    packages = lock.pylock.packages.values()
    return {p.name: p.version for p in packages}, {p.name: p.line for p in packages if p.line}


def _conda_solved(environment: LockFile) -> bool:
    return environment.header is not None and environment.header.conda_solved


def _conda_lock_packages(document: dict, manager: str, platform: str, with_build: bool = False) -> dict[str, str]:
    from lockguard.model.names import canonical_name

    out = {}
    for package in document.get("package") or []:
        if package.get("manager") != manager or package.get("platform") != platform:
            continue
        name = canonical_name(package["name"]) if manager == "pip" else package["name"]
        version = str(package.get("version"))
        out[name] = f"{version}={package.get('build')}" if with_build else version
    return out


def _edited_entries(snapshot: Snapshot, lock: LockFile) -> list[str]:
    """Pins of an edited file that its sibling views do not have."""
    if lock.kind == "requirements":
        mine = _pins(lock) or {}
        environment = snapshot.of_kind("environment", lock.platform)
        other = {n: v for n, (v, _l) in environment.environment.pip.items()} if environment and environment.environment else None
    elif lock.kind == "environment" and lock.environment:
        mine = {n: v for n, (v, _l) in lock.environment.pip.items()}
        other = _pins(snapshot.of_kind("requirements", lock.platform))
    elif lock.kind == "pylock" and lock.pylock:
        mine = _pylock_pins(lock)[0]
        other = _pins(snapshot.of_kind("requirements", lock.platform))
    else:
        return []
    if other is None:
        return []
    return [f"{n}=={mine.get(n) or '(absent)'}" for n in sorted(set(mine) | set(other)) if mine.get(n) != other.get(n)]


def _first_edited_line(lock: LockFile, edited: list[str]) -> int | None:
    if edited and lock.requirements:
        name = edited[0].split("==")[0]
        entry = lock.requirements.entries.get(name)
        if entry:
            return entry.line
    if edited and lock.environment:
        name = edited[0].split("==")[0]
        if name in lock.environment.pip:
            return lock.environment.pip[name][1]
    if edited and lock.pylock:
        package = lock.pylock.packages.get(edited[0].split("==")[0])
        if package and package.line:
            return package.line
    return _line_of(lock.text or "", "lockguard-body-hash")


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


def _show(value: str | None) -> str:
    return value if value is not None else "nothing"
