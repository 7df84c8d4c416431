"""The registry of lock formats: every lock file lockguard writes, and what each one does.

A `LockFormat` joins a format's naming rules (model/lock_names.py: its kind, its [outputs] key and
default file name, whether there is one file per platform, whether it is opt-in) to how it is
rendered, parsed and viewed. Resolve renders the formats the intent asks for, check reads and
compares them, the project files read them, all by walking `FORMATS`: only this module tells one
format from another. A new lock format is a module (its parser and renderer) and one entry here.

The format modules are imported when a format is first used, not with this registry: a memo hit or
a cached check reads no lock file and loads no YAML or TOML reader.

`EXPORTS` holds the export-only formats (`lockguard export --format`): rendered from the lock,
never read back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeAlias

from lockguard.lockfiles.lock_view import LockView
from lockguard.model import lock_names
from lockguard.model.lock_names import LockName
from lockguard.model.names import canonical_name

if TYPE_CHECKING:
    from lockguard.lockfiles.conda_lock import CondaLockDocument
    from lockguard.lockfiles.cyclonedx import Sbom
    from lockguard.lockfiles.environment_yml import EnvironmentFile
    from lockguard.lockfiles.headers import PinEntries
    from lockguard.lockfiles.pylock import PylockFile
    from lockguard.lockfiles.requirements_lock import RequirementsLock
    from lockguard.model.intent import Intent
    from lockguard.model.lock import Lock, PlatformLock

# what a format's parser gives: one of these, by format
Parsed: TypeAlias = "RequirementsLock | EnvironmentFile | CondaLockDocument | PylockFile"


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderRequest:
    """What a renderer gets: the lock, the platform of a per-platform file (None for a file that
    holds every platform), and the intent it locks."""

    lock: Lock
    platform: PlatformLock | None
    intent: Intent
    intent_name: str  # the intent file's name, for the header's "written from" line
    relative: str  # the file's path relative to the project (pylock.toml names itself)
    # why this profile keeps other versions than the project's other profiles (requirements.lock)
    held_back: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LockFormat:
    """One kind of lock file: its name rules and its functions."""

    name: LockName
    parse: Callable[[str], Any]  # text -> Parsed; LockSyntaxError (with the line) if malformed
    pin_entries: Callable[[str], PinEntries]  # for the header's pins digest (lockfiles/pins.py)
    # (text, the platform to call a file that does not say) -> its views by platform
    views: Callable[[str, str], dict[str, LockView]]
    render: Callable[[RenderRequest], str]
    # the order in which the views of one platform's pip pins are asked (lowest first), and in
    # which hand edits of one pin in several files are adopted
    pip_rank: int
    # the lock's two sides first hand: requirements.lock the pip side, environment.yml the conda
    # side (the other files say the same again)
    primary: bool = False
    # read by check's CUDA coherence rules (and so by resolve's refusal gate, check/gate.py)
    cuda_rules: bool = False
    # its conda side lists conda specs also when they are versions only (knowledge-only: no
    # builds); a file without this holds solved records only
    lists_unsolved_conda: bool = False
    # where resolve takes its preferences from, when this file was edited by hand
    pip_preferences: bool = False
    conda_preferences: bool = False

    @property
    def kind(self) -> str:
        return self.name.kind

    @property
    def per_platform(self) -> bool:
        return self.name.per_platform

    @property
    def opt_in(self) -> bool:
        return self.name.opt_in

    def wanted(self, intent: Intent) -> bool:
        return self.name.wanted(intent)


def _lazy(module: str, function: str) -> Callable[..., Any]:
    """`module.function`, imported on its first call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(module), function)(*args, **kwargs)

    call.__qualname__ = call.__name__ = f"{module}.{function}"
    return call


# -- the views each format gives -------------------------------------------------------------------


def _said(text: str, platform: str) -> str:
    """The header's `lockguard-platform` wins over what the caller calls the file."""
    from lockguard.lockfiles.headers import read_header

    return read_header(text).fields.get("platform") or platform


def _requirements_views(text: str, platform: str) -> dict[str, LockView]:
    from lockguard.lockfiles import requirements_lock

    said = _said(text, platform)
    entries = requirements_lock.parse(text).entries
    return {said: LockView(said, {n: e.version for n, e in entries.items()})}


def _environment_views(text: str, platform: str) -> dict[str, LockView]:
    from lockguard.lockfiles import environment_yml

    said = _said(text, platform)
    env = environment_yml.parse(text)
    return {
        said: LockView(
            said,
            {n: v for n, (v, _line) in env.pip.items()},
            {n: (v, b or "") for n, (v, b, _line) in env.conda.items()},
        )
    }


def _pylock_views(text: str, platform: str) -> dict[str, LockView]:
    from lockguard.lockfiles import pylock

    said = _said(text, platform)
    lock = pylock.read(text)
    where = str(lock.tool.get("platform") or said)
    return {where: LockView(where, {n: p.version for n, p in lock.packages.items()})}


def _conda_lock_views(text: str, platform: str) -> dict[str, LockView]:
    from lockguard.lockfiles import conda_lock

    pip: dict[str, dict[str, str]] = {}
    conda: dict[str, dict[str, tuple[str, str]]] = {}
    for package in conda_lock.read(text)["package"]:
        where = str(package["platform"])
        name, version = str(package["name"]), str(package["version"])
        if package["manager"] == "pip":
            pip.setdefault(where, {})[canonical_name(name)] = version
        else:
            conda.setdefault(where, {})[name] = (version, str(package.get("build") or ""))
    return {p: LockView(p, pip.get(p, {}), conda.get(p, {})) for p in sorted(set(pip) | set(conda))}


# -- how each format is rendered -------------------------------------------------------------------


def _conda_state(platform: PlatformLock) -> str | None:
    if platform.conda is None:
        return None
    return "solved" if platform.conda.solved else "knowledge-only (not solved)"


def _one(request: RenderRequest) -> PlatformLock:
    if request.platform is None:
        raise ValueError(f"{request.relative} is a per-platform file: name its platform")
    return request.platform


def _render_requirements(request: RenderRequest) -> str:
    from lockguard.lockfiles import requirements_lock

    platform, intent = _one(request), request.intent
    return requirements_lock.render(
        platform.pip,
        intent_hash=intent.hash,
        intent_name=request.intent_name,
        python=str(intent.python),
        index_urls=platform.index_urls,
        conda_solved=_conda_state(platform),
        profile=intent.profile,
        held_back=request.held_back,
        record=intent.cooldown_record(),
    )


def _render_environment(request: RenderRequest) -> str:
    from lockguard.lockfiles import environment_yml

    intent = request.intent
    return environment_yml.render(
        _one(request),
        intent_hash=intent.hash,
        intent_name=request.intent_name,
        env_name=intent.name,
        record=intent.cooldown_record(),
    )


def _render_pylock(request: RenderRequest) -> str:
    from pathlib import PurePath

    from lockguard.lockfiles import pylock_write

    intent = request.intent
    return pylock_write.render(
        _one(request),
        intent_hash=intent.hash,
        intent_name=request.intent_name,
        python=str(intent.python),
        filename=PurePath(request.relative).name,
        record=intent.cooldown_record(),
    )


def _render_conda_lock(request: RenderRequest) -> str:
    from lockguard.lockfiles import conda_lock

    return conda_lock.render(request.lock, intent_name=request.intent_name)


# -- the registry ----------------------------------------------------------------------------------

_REQUIREMENTS = "lockguard.lockfiles.requirements_lock"
_ENVIRONMENT = "lockguard.lockfiles.environment_yml"
_PYLOCK = "lockguard.lockfiles.pylock"
_CONDA_LOCK = "lockguard.lockfiles.conda_lock"

REQUIREMENTS = LockFormat(
    name=lock_names.REQUIREMENTS,
    parse=_lazy(_REQUIREMENTS, "parse"),
    pin_entries=_lazy(_REQUIREMENTS, "pin_entries"),
    views=_requirements_views,
    render=_render_requirements,
    pip_rank=0,
    primary=True,
    cuda_rules=True,
    pip_preferences=True,
)
ENVIRONMENT = LockFormat(
    name=lock_names.ENVIRONMENT,
    parse=_lazy(_ENVIRONMENT, "parse"),
    pin_entries=_lazy(_ENVIRONMENT, "pin_entries"),
    views=_environment_views,
    render=_render_environment,
    pip_rank=2,
    primary=True,
    cuda_rules=True,
    lists_unsolved_conda=True,
)
PYLOCK = LockFormat(
    name=lock_names.PYLOCK,
    parse=_lazy(_PYLOCK, "read"),
    pin_entries=_lazy(_PYLOCK, "pin_entries"),
    views=_pylock_views,
    render=_render_pylock,
    pip_rank=1,
)
CONDA_LOCK = LockFormat(
    name=lock_names.CONDA_LOCK,
    parse=_lazy(_CONDA_LOCK, "read"),
    pin_entries=_lazy(_CONDA_LOCK, "pin_entries"),
    views=_conda_lock_views,
    render=_render_conda_lock,
    pip_rank=3,
    cuda_rules=True,
    conda_preferences=True,
)

# in the order resolve writes them (model/lock_names.py's LOCK_NAMES)
FORMATS = (REQUIREMENTS, ENVIRONMENT, PYLOCK, CONDA_LOCK)
BY_KIND = {f.kind: f for f in FORMATS}
# the views of one platform's pip pins, in the order they are asked
BY_PIP_RANK = tuple(sorted(FORMATS, key=lambda f: f.pip_rank))


def format_of(kind: str) -> LockFormat:
    """The format of a kind (KeyError for a kind no format has)."""
    return BY_KIND[kind]


def kind_of(filename: str, text: str) -> str:
    """Which kind of lock file `text` is: by its name first (as [outputs] names them by default),
    then by what it looks like."""
    name = filename.rsplit("/", 1)[-1].lower()
    if name.startswith("conda-lock") and name.endswith((".yml", ".yaml")):
        return CONDA_LOCK.kind
    if name.startswith("pylock") and name.endswith(".toml"):
        return PYLOCK.kind
    if name.endswith((".yml", ".yaml")):
        looks_like_conda_lock = "\npackage:" in text and "\nmetadata:" in text
        return CONDA_LOCK.kind if looks_like_conda_lock else ENVIRONMENT.kind
    if name.endswith(".toml"):
        return PYLOCK.kind
    return REQUIREMENTS.kind


# -- export-only formats ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportFormat:
    """A format `lockguard export --format KEY` writes from the lock; never read back."""

    key: str
    render: Callable[[Sbom], str]


CYCLONEDX = ExportFormat(key="cyclonedx", render=_lazy("lockguard.lockfiles.cyclonedx", "render"))

EXPORTS = (CYCLONEDX,)
