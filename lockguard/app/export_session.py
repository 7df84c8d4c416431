"""`lockguard export`'s session: the project's lock files read under its shared lock, refused
when `lockguard check` would call them missing, stale, edited or contradicting each other, and
rendered as an SBOM (lockfiles/cyclonedx.py) to stdout or, atomically, to a file.

What each file gives: requirements.lock the pip pins and the SHA-256 of every locked file;
pylock.toml (when the intent asks for it) and conda-lock.yml the files' URLs; conda-lock.yml the
solved conda records (build, URL, hashes); environment.yml the conda specs pinned from knowledge.
The CUDA stack facts are those `lockguard diff` reports (check/lock_changes.py's stack_facts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lockguard import __version__
from lockguard.app.check_session import from_here
from lockguard.app.project import load_one_intent
from lockguard.check.lock_changes import stack_facts
from lockguard.check.lock_facts import facts_of
from lockguard.check.rules_lock import lock_state, views_agree
from lockguard.check.snapshot import LockFile, Snapshot
from lockguard.errors import InputError
from lockguard.io.knowledge.files import load_knowledge
from lockguard.io.project.files import write_file
from lockguard.io.project.intent_file import source_of
from lockguard.io.project.lock_set import LockSet
from lockguard.io.project.project_files import read_snapshot
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles import cyclonedx
from lockguard.lockfiles.formats import EXPORTS
from lockguard.lockfiles.lock_view import LockView
from lockguard.lockfiles.syntax import clip
from lockguard.model.finding import ERROR
from lockguard.model.names import canonical_name

# --format -> the renderer of that SBOM format (the export-only entries of lockfiles/formats.py)
RENDERERS: dict[str, Callable[[cyclonedx.Sbom], str]] = {f.key: f.render for f in EXPORTS}
FIRST = "run `lockguard resolve` first (and commit the lock files it writes)"


def export_lock(
    intent_path: Path | None,
    *,
    fmt: str,
    platform: str | None,
    output: Path | None,
    warn: Callable[[str], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    profile: str | None = None,
) -> str:
    """The SBOM of the project's lock as text; written to `output` (atomically) when given."""
    intent = load_one_intent(intent_path, profile, validate_conda=False, warn=warn)
    if platform is not None and platform not in intent.platforms:
        raise InputError(
            f"--platform: the lock has no {clip(platform)} section (it locks "
            f"{', '.join(intent.platforms)})",
            key="platforms",
            hint=f"pass one of: {', '.join(intent.platforms)}",
        )
    with LockSet(
        source_of(intent).folder, exclusive=False, command="export", on_wait=on_wait, warn=warn
    ):
        snapshot = read_snapshot(intent, scan_repo=False)
    _refuse_unless_current(snapshot, source_of(intent).root)
    sbom = sbom_of(snapshot, load_knowledge(), platform)
    text = RENDERERS[fmt](sbom)
    if output is not None:
        write_file(output, text)
    return text


def _refuse_unless_current(snapshot: Snapshot, root: Path) -> None:
    """Exit 2, naming the file, for a lock `lockguard check` rejects as a lock (LG100-LG104,
    LG110, LG111): an SBOM describes what the intent locks, never a stale or edited copy."""
    found = lock_state(snapshot) + views_agree(snapshot)
    problems = from_here([f for f in found if f.severity == ERROR], root)
    if not problems:
        return
    first = problems[0]
    more = f" (and {len(problems) - 1} more: `lockguard check` lists them)" if problems[1:] else ""
    raise InputError(
        f"cannot export the lock: {first.message} ({first.code}){more}",
        file=first.file,
        line=first.line,
        hint=FIRST,
    )


def sbom_of(snapshot: Snapshot, knowledge: Knowledge, only: str | None) -> cyclonedx.Sbom:
    intent = snapshot.intent
    platforms = tuple(
        _platform_packages(snapshot, knowledge, p)
        for p in intent.platforms
        if only is None or p == only
    )
    files = tuple(
        (f.path, f.header.body_hash)
        for f in snapshot.files
        if f.header is not None
        and f.header.body_hash
        and (only is None or f.platform in (None, only))
    )
    properties = [
        ("platforms", " ".join(p.platform for p in platforms)),
        ("python", str(intent.python)),
        ("intent-hash", f"sha256:{intent.hash}"),
    ]
    if not intent.pip_only:
        solved = all(p.conda_solved for p in platforms)
        properties.append(("conda-side", "solved" if solved else "knowledge-only (not solved)"))
    return cyclonedx.Sbom(intent.name, __version__, platforms, files, tuple(properties))


def _platform_packages(
    snapshot: Snapshot, knowledge: Knowledge, platform: str
) -> cyclonedx.PlatformPackages:
    requirements = _of(snapshot, "requirements", platform)
    environment = _of(snapshot, "environment", platform)
    conda_lock = _of(snapshot, "conda-lock", None)
    pylock = _of(snapshot, "pylock", platform)
    lock = requirements.requirements if requirements is not None else None
    assert lock is not None  # lock_state refused a missing or foreign file
    intent_name = snapshot.intent_file
    indexes = tuple(u for u in (lock.index_url, *lock.extra_index_urls) if u)
    documented = _conda_lock_packages(conda_lock, platform)
    pip_files = _pip_files(documented, pylock)
    pip = tuple(
        cyclonedx.PipPackage(
            name,
            entry.version,
            entry.hashes,
            pip_files.get(name, ()),
            indexes,
            tuple("" if v == f"-r {intent_name}" else canonical_name(v) for v in entry.via),
        )
        for name, entry in sorted(lock.entries.items())
    )
    solved = environment is None or environment.header is None or environment.header.conda_solved
    conda = (
        _solved_conda(documented, platform) if solved else _knowledge_conda(environment, platform)
    )
    view = LockView(
        platform,
        {p.name: p.version for p in pip},
        {c.name: (c.version or "", c.build or "") for c in conda},
    )
    return cyclonedx.PlatformPackages(platform, pip, conda, solved, cuda_facts(view, knowledge))


def cuda_facts(view: LockView, knowledge: Knowledge) -> tuple[tuple[str, str], ...]:
    """The CUDA stack facts of one platform, as `lockguard diff` reports them, and torch, its
    variant, cuDNN and NCCL where the lock pins them."""
    stack = stack_facts(view, knowledge)
    torch = facts_of(view.platform, dict(view.pip), {}, knowledge)
    facts = [
        ("cuda", stack.cuda),
        ("driver-floor", stack.driver_floor),
        ("gpu-architectures", " ".join(stack.archs) or None),
        ("torch", torch.torch),
        ("torch-variant", torch.torch_variant),
        ("cudnn", _pinned(view, r"nvidia-cudnn-cu\d+", "cudnn")),
        ("nccl", _pinned(view, r"nvidia-nccl-cu\d+", "nccl")),
    ]
    return tuple((name, value) for name, value in facts if value)


def _pinned(view: LockView, pip_pattern: str, conda_name: str) -> str | None:
    found = [v for n, v in sorted(view.pip.items()) if re.fullmatch(pip_pattern, n)]
    if found:
        return found[0]
    version = view.conda.get(conda_name, ("", ""))[0]
    return version or None


def _of(snapshot: Snapshot, kind: str, platform: str | None) -> LockFile | None:
    return snapshot.of_kind(kind, platform)


def _conda_lock_packages(lock: LockFile | None, platform: str) -> list[dict]:
    if lock is None or lock.conda_lock is None:
        return []
    return [p for p in lock.conda_lock["package"] if p["platform"] == platform]


def _pip_files(
    documented: list[dict], pylock: LockFile | None
) -> dict[str, tuple[cyclonedx.FileRef, ...]]:
    """name -> the locked files whose URL a lock file records: every file in pylock.toml, the one
    conda-lock.yml chose otherwise."""
    if pylock is not None and pylock.pylock is not None:
        return {
            name: tuple(
                cyclonedx.FileRef(f.url, f.hashes.get("sha256")) for f in package.files if f.url
            )
            for name, package in pylock.pylock.packages.items()
        }
    out: dict[str, tuple[cyclonedx.FileRef, ...]] = {}
    for package in documented:
        if package["manager"] == "pip" and isinstance(package.get("url"), str):
            digest = (package.get("hash") or {}).get("sha256")
            out[canonical_name(package["name"])] = (
                cyclonedx.FileRef(package["url"], str(digest) if digest else None),
            )
    return out


def _solved_conda(documented: list[dict], platform: str) -> tuple[cyclonedx.CondaPackage, ...]:
    out = []
    for package in documented:
        if package["manager"] != "conda":
            continue
        url = package.get("url")
        digests = package.get("hash") or {}
        channel, subdir = cyclonedx.channel_of(url) if isinstance(url, str) else (None, platform)
        out.append(
            cyclonedx.CondaPackage(
                str(package["name"]),
                str(package["version"]),
                channel,
                subdir or platform,
                str(package.get("build") or "") or None,
                cyclonedx.FileRef(url, _text(digests.get("sha256")), _text(digests.get("md5")))
                if isinstance(url, str)
                else None,
            )
        )
    return tuple(sorted(out, key=lambda c: c.name))


def _knowledge_conda(
    environment: LockFile | None, platform: str
) -> tuple[cyclonedx.CondaPackage, ...]:
    """The conda specs environment.yml pins from knowledge: name and version as written, the
    channel named (`channel::name`) or the first of the file's channels; nothing invented."""
    if environment is None or environment.environment is None:
        return ()
    env = environment.environment
    channels = [c for c in env.channels if c != "nodefaults"]
    out = []
    for spec in env.specs:
        channel, _, rest = spec.rpartition("::")
        name = re.split(r"[\s=<>!~\[]", rest, maxsplit=1)[0]
        version = env.conda[name][0] if name in env.conda and not env.conda[name][1] else None
        out.append(
            cyclonedx.CondaPackage(
                name,
                version or None,
                channel or (channels[0] if channels else None),
                platform,
                spec=spec,
            )
        )
    return tuple(sorted(out, key=lambda c: c.name))


def _text(value: object) -> str | None:
    return str(value) if value else None
