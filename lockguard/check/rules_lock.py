"""Rules about the lock files themselves: present, current, untouched, and agreeing with each other.

LG100 a lock file is missing            LG104 not a lockguard file (no header)
LG101 the intent changed since the lock LG110 pip pins differ between the views
LG102 a lock file was edited by hand    LG111 conda records differ between the views
LG112 a lock file says other than the intent (index options, environment name, channels, platform,
      Python, or knowledge-only conda specs that differ from what was hashed into conda-lock.yml)
(pylock.toml, when the intent asks for it, is one more view: LG100-LG104 and LG110 cover it)
LG140 (--strict) conda side pinned from knowledge only
LG141 (--strict) a pin without hashes
"""

from __future__ import annotations

from collections.abc import Sequence

from lockguard.check.snapshot import CondaLockDocument, LockFile, Snapshot
from lockguard.lockfiles.conda_lock import content_hash_of, package_lines
from lockguard.lockfiles.formats import CONDA_LOCK, ENVIRONMENT, PYLOCK, REQUIREMENTS
from lockguard.lockfiles.headers import body_hash_of
from lockguard.lockfiles.pins import entries, pins_digest
from lockguard.lockfiles.syntax import LockSyntaxError, clip
from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.intent import Intent
from lockguard.model.names import canonical_name

RELOCK = "run `lockguard resolve` and commit the lock files it writes"


def lock_state(snapshot: Snapshot) -> list[Finding]:
    out: list[Finding] = []
    for lock in snapshot.files:
        if lock.text is None:
            out.append(codes.LOCK_MISSING.finding(f"{lock.path} is missing", RELOCK, lock.path))
            continue
        header = lock.header
        if header is None or header.intent_hash is None:
            out.append(
                codes.LOCK_NOT_LOCKGUARDS.finding(
                    f"{lock.path} has no lockguard header: it was not written by lockguard",
                    RELOCK,
                    lock.path,
                    1,
                )
            )
            continue
        if header.intent_hash != snapshot.intent.hash:
            out.append(
                codes.INTENT_CHANGED.finding(
                    f"{snapshot.intent_file} changed since {lock.path} was written (intent hash "
                    f"{header.intent_hash[:12]} in the lock, {snapshot.intent.hash[:12]} now)",
                    RELOCK,
                    lock.path,
                    _line_of(lock.text, "lockguard-intent-hash"),
                )
            )
        if header.body_hash != body_hash_of(lock.text):
            out.append(_hand_edit(snapshot, lock))
    return out


def views_agree(snapshot: Snapshot) -> list[Finding]:
    """environment.yml's pip section, requirements.lock, conda-lock.yml and pylock.toml hold the
    same pins; the conda records of environment.yml and conda-lock.yml are the same."""
    out: list[Finding] = []
    conda_lock = snapshot.of_kind(CONDA_LOCK.kind)
    for platform in snapshot.intent.platforms:
        requirements = snapshot.of_kind(REQUIREMENTS.kind, platform)
        environment = snapshot.of_kind(ENVIRONMENT.kind, platform)
        req_pins = _pins(requirements)
        # path -> (pins, the line of each; None: read when a finding needs it)
        views: dict[str, tuple[dict[str, str], dict[str, int] | None]] = {}
        if environment and environment.environment:
            views[environment.path] = (
                {n: v for n, (v, _l) in environment.environment.pip.items()},
                {n: line for n, (_v, line) in environment.environment.pip.items()},
            )
        if conda_lock and conda_lock.conda_lock is not None:
            views[conda_lock.path] = (
                _conda_lock_packages(conda_lock.conda_lock, "pip", platform),
                None,  # its lines are parsed again only when a finding needs them (below)
            )
        pylock = snapshot.of_kind(PYLOCK.kind, platform)
        if pylock and pylock.pylock is not None:
            views[pylock.path] = _pylock_pins(pylock)
        if requirements is not None and req_pins is not None:
            for path, (pins, lines) in views.items():
                differ = [
                    n for n in sorted(set(pins) | set(req_pins)) if pins.get(n) != req_pins.get(n)
                ]
                if differ and lines is None and conda_lock is not None:
                    lines = package_lines(conda_lock.text or "", "pip", platform)
                for name in differ:
                    out.append(
                        codes.PIP_VIEWS_DIFFER.finding(
                            f"{name}: {requirements.path} has {_show(req_pins.get(name))}, "
                            f"{path} has {_show(pins.get(name))}",
                            RELOCK,
                            path,
                            (lines or {}).get(name),
                        )
                    )
        if (
            environment
            and environment.environment
            and conda_lock
            and conda_lock.conda_lock is not None
            and _conda_solved(environment)
        ):
            env_conda = {
                n: f"{v}={b}" for n, (v, b, _l) in environment.environment.conda.items() if b
            }
            lock_conda = _conda_lock_packages(
                conda_lock.conda_lock, "conda", platform, with_build=True
            )
            lines = {n: line for n, (_v, _b, line) in environment.environment.conda.items()}
            for name in sorted(set(env_conda) | set(lock_conda)):
                if env_conda.get(name) != lock_conda.get(name):
                    out.append(
                        codes.CONDA_VIEWS_DIFFER.finding(
                            f"{name}: {environment.path} has {_show(env_conda.get(name))}, "
                            f"{conda_lock.path} has "
                            f"{_show(lock_conda.get(name))}",
                            RELOCK,
                            environment.path,
                            lines.get(name),
                        )
                    )
    return out


def contents_match_intent(snapshot: Snapshot) -> list[Finding]:
    """What resolve derives from the intent alone must be what the (sealed) files say: a re-sealed
    edit that stays well-formed is still caught where it contradicts the intent."""
    intent = snapshot.intent
    out: list[Finding] = []

    def finding(lock: LockFile, message: str, line: int | None = None) -> None:
        out.append(
            codes.LOCK_CONTRADICTS_INTENT.finding(
                f"{lock.path}: {message}", RELOCK, lock.path, line
            )
        )

    conda_lock = snapshot.of_kind(CONDA_LOCK.kind)
    metadata = ((conda_lock.conda_lock or {}).get("metadata") or {}) if conda_lock else {}
    hashes = metadata.get("content_hash") or {}
    # the content_hash was computed from the intent hash of the resolve that wrote it, not from
    # today's intent: an intent edit alone is LG101 (stale), never a false LG112 here
    custom = metadata.get("custom_metadata")
    hashed_intent = (
        (conda_lock.header.intent_hash if conda_lock and conda_lock.header else None)
        or (custom.get("lockguard-intent-hash") if isinstance(custom, dict) else None)
        or intent.hash
    )
    for lock in snapshot.files:
        if lock.text is None or lock.header is None:
            continue
        fields = lock.header.fields
        if lock.platform and fields.get("platform") not in (None, lock.platform):
            finding(
                lock,
                f"its header says platform {fields['platform']}, "
                f"the file is the {lock.platform} lock",
                _line_of(lock.text, "lockguard-platform"),
            )
        if lock.requirements is not None:
            if fields.get("python") not in (None, str(intent.python)):
                finding(
                    lock,
                    f"its header says Python {fields['python']}, "
                    f"the intent asks for {intent.python}",
                    _line_of(lock.text, "lockguard-python"),
                )
            urls = [
                u for u in [lock.requirements.index_url, *lock.requirements.extra_index_urls] if u
            ]
            problem = _index_problem(urls, intent)
            if problem:
                finding(lock, problem, _line_of(lock.text, "--index-url"))
        if lock.environment is not None:
            env = lock.environment
            if env.name != intent.name:
                finding(
                    lock,
                    f"the environment name is {env.name or 'missing'}, "
                    f"the intent's is {intent.name}",
                    _line_of(lock.text, "name:"),
                )
            if list(env.channels) != [*intent.channels, "nodefaults"]:
                finding(
                    lock,
                    f"channels are {', '.join(env.channels) or 'none'}, the intent's are "
                    f"{', '.join([*intent.channels, 'nodefaults'])}",
                    _line_of(lock.text, "channels:"),
                )
            problem = _index_problem(env.index_urls, intent) if env.pip else None
            if problem:
                finding(lock, problem, _line_of(lock.text, "--index-url"))
            if (
                not lock.header.conda_solved
                and lock.platform is not None
                and lock.platform in hashes
            ):
                specs = env.specs
                candidates = {content_hash_of(str(hashed_intent), lock.platform, specs)}
                # the renderer adds a bare pip before the pip: section
                if specs and specs[-1] == "pip":
                    candidates.add(content_hash_of(str(hashed_intent), lock.platform, specs[:-1]))
                if hashes[lock.platform] not in candidates:
                    finding(
                        lock,
                        "its conda specs are not the ones resolve pinned "
                        "(conda-lock.yml's content_hash "
                        f"for {lock.platform} was computed from other specs)",
                        _line_of(lock.text, "dependencies:"),
                    )
    return out


def _index_problem(urls: Sequence[str], intent: Intent) -> str | None:
    """resolve writes the intent's indexes first, then only PyTorch-index variants."""
    wanted = list(intent.indexes)
    if list(urls[: len(wanted)]) != wanted:
        return (
            f"its index options are {', '.join(urls) or 'missing'}; "
            f"the intent's indexes are {', '.join(wanted)}"
        )
    extra = [
        u for u in urls[len(wanted) :] if not u.startswith(intent.pytorch_index.rstrip("/") + "/")
    ]
    if extra:
        return f"it names indexes the intent does not: {', '.join(extra)}"
    return None


def strict(snapshot: Snapshot) -> list[Finding]:
    out: list[Finding] = []
    for lock in snapshot.files:
        if lock.text is None or lock.header is None:
            continue
        if lock.environment is not None and not lock.header.conda_solved:
            out.append(
                codes.CONDA_FROM_KNOWLEDGE.finding(
                    f"the conda side of {lock.path} was pinned "
                    "from lockguard's knowledge, not solved "
                    "(versions only, no builds or hashes)",
                    "run `lockguard resolve` where the intent's channels can be reached",
                    lock.path,
                    _line_of(lock.text, "lockguard-conda-side"),
                )
            )
        if lock.requirements:
            for entry in lock.requirements.entries.values():
                if not entry.hashes:
                    out.append(
                        codes.PIN_WITHOUT_HASH.finding(
                            f"{entry.name}=={entry.version} has no --hash",
                            "its index gives no sha256; pip --require-hashes will refuse it",
                            lock.path,
                            entry.line,
                        )
                    )
    return out


# -- helpers ---------------------------------------------------------------------------------------


def _pins(lock: LockFile | None) -> dict[str, str] | None:
    if lock is None or lock.requirements is None:
        return None
    return {n: e.version for n, e in lock.requirements.entries.items()}


def _pylock_pins(lock: LockFile) -> tuple[dict[str, str], dict[str, int]]:
    packages = lock.pylock.packages.values() if lock.pylock is not None else ()
    return {p.name: p.version for p in packages}, {p.name: p.line for p in packages if p.line}


def _conda_solved(environment: LockFile) -> bool:
    return environment.header is not None and environment.header.conda_solved


def _conda_lock_packages(
    document: CondaLockDocument, manager: str, platform: str, with_build: bool = False
) -> dict[str, str]:
    out = {}
    for package in document.get("package") or []:
        if package.get("manager") != manager or package.get("platform") != platform:
            continue
        name = canonical_name(package["name"]) if manager == "pip" else package["name"]
        version = str(package.get("version"))
        out[name] = f"{version}={package.get('build')}" if with_build else version
    return out


def _hand_edit(snapshot: Snapshot, lock: LockFile) -> Finding:
    """LG102, saying only what is known: against lockguard's own copy of what it wrote (when this
    machine has it) every change is named; else the header's pins digest tells whether a pin
    changed, and the sibling views name the entries that differ from theirs."""
    hint = (
        "`lockguard resolve` puts back the pins lockguard wrote and reports the edit "
        "(`lockguard resolve --accept-edits` adopts it instead); to move a pin, change the "
        "intent or run `lockguard resolve --upgrade-package NAME==VERSION`"
    )
    if lock.written is not None:
        changes, line = edits_since_written(lock)
        if changes:
            shown = "; ".join(changes[:8]) + (
                f"; and {len(changes) - 8} more" if len(changes) > 8 else ""
            )
            return codes.LOCK_HAND_EDITED.finding(
                f"{lock.path} was edited by hand: {shown}", hint, lock.path, line
            )
    edited = _edited_entries(snapshot, lock)
    pins_changed = _pins_changed(lock)
    where = _line_of(lock.text or "", "lockguard-body-hash")
    if edited:
        return codes.LOCK_HAND_EDITED.finding(
            f"{lock.path} was edited by hand (its body hash does not match); entries "
            f"that differ from the other lock files: {', '.join(edited)}",
            hint,
            lock.path,
            _first_edited_line(lock, edited),
        )
    if pins_changed is False:
        return codes.LOCK_HAND_EDITED.finding(
            f"{lock.path} was edited by hand outside the pins (comments, hashes, index "
            "options or formatting): its pins are the ones lockguard wrote",
            hint,
            lock.path,
            where,
        )
    if pins_changed:
        return codes.LOCK_HAND_EDITED.finding(
            f"{lock.path} was edited by hand: its pins are not the ones lockguard wrote "
            "(which ones changed cannot be told without lockguard's copy of the file, "
            "kept only on the "
            "machine that wrote it)",
            hint,
            lock.path,
            where,
        )
    return codes.LOCK_HAND_EDITED.finding(
        f"{lock.path} was edited by hand: its body changed since lockguard wrote it",
        hint,
        lock.path,
        where,
    )


def _pins_changed(lock: LockFile) -> bool | None:
    """Whether the pins differ from the digest the header records; None when it records none
    (a file written before lockguard recorded it) or the file no longer parses."""
    recorded = lock.header.pins_hash if lock.header is not None else None
    if recorded is None:
        return None
    try:
        return pins_digest(lock.kind, lock.text or "") != recorded
    except (LockSyntaxError, ValueError):
        return None


def edits_since_written(lock: LockFile) -> tuple[list[str], int | None]:
    """(what changed between lockguard's copy and the file, the line of the first change)."""
    try:
        before, after = entries(lock.kind, lock.written or ""), entries(lock.kind, lock.text or "")
    except LockSyntaxError:
        before = after = {}
    changes: list[str] = []
    first: int | None = None
    for key in sorted(set(before) | set(after)):
        if key not in after:
            changes.append(f"{key} removed (lockguard wrote {before[key][0]})")
            continue
        old, new = before.get(key), after[key]
        if old is None:
            changes.append(f"{key} {new[0]} added")
        elif old[:2] == new[:2]:
            continue
        elif old[0] != new[0]:
            changes.append(f"{key}: lockguard wrote {old[0]}, the file has {new[0]}")
        else:
            changes.append(f"{key} {new[0]}: its hashes changed")
        line = new[2]
        if line is not None and (first is None or line < first):
            first = line
    if not changes:
        old_lines, new_lines = (lock.written or "").split("\n"), (lock.text or "").split("\n")
        for number, (old_line, new_line) in enumerate(
            zip(old_lines, new_lines, strict=False), start=1
        ):
            if old_line != new_line and "lockguard-body-hash" not in old_line:
                changes.append(
                    f"line {number} was {clip(old_line, 60)!r}, is {clip(new_line, 60)!r}"
                )
                first = number
                break
        else:
            if len(old_lines) != len(new_lines):
                number = min(len(old_lines), len(new_lines)) + 1
                changes.append(
                    f"lines from {number} on were "
                    f"{'added' if len(new_lines) > len(old_lines) else 'removed'}"
                )
                first = number
    return changes, first


def _edited_entries(snapshot: Snapshot, lock: LockFile) -> list[str]:
    """Pins of an edited file that its sibling views do not have."""
    if lock.requirements is not None:
        mine = _pins(lock) or {}
        environment = snapshot.of_kind(ENVIRONMENT.kind, lock.platform)
        other = (
            {n: v for n, (v, _l) in environment.environment.pip.items()}
            if environment and environment.environment
            else None
        )
    elif lock.environment:
        mine = {n: v for n, (v, _l) in lock.environment.pip.items()}
        other = _pins(snapshot.of_kind(REQUIREMENTS.kind, lock.platform))
    elif lock.pylock:
        mine = _pylock_pins(lock)[0]
        other = _pins(snapshot.of_kind(REQUIREMENTS.kind, lock.platform))
    else:
        return []
    if other is None:
        return []
    return [
        f"{n}=={mine.get(n) or '(absent)'}"
        for n in sorted(set(mine) | set(other))
        if mine.get(n) != other.get(n)
    ]


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
