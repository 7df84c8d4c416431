"""What each lock file is called: the naming half of the lock formats (lockfiles/formats.py holds
the other half, how each is rendered, parsed and viewed, and points at these).

It lives in model because the intent's parser needs it ([outputs] keys, the suffix an output name
must end with, per-platform names that must not collide) and model imports nothing above it.
Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from lockguard.model.intent import Intent, Outputs


@dataclass(frozen=True, slots=True, kw_only=True)
class LockName:
    """How one kind of lock file is named and when the intent asks for it."""

    kind: str  # also its key in [outputs] and in the header's messages
    field: str  # the attribute of model.intent.Outputs that holds its file name
    per_platform: bool  # one file per platform (False: one file holds every platform)
    conda_side: bool = False  # written only when the intent has a conda side
    opt_in: bool = False  # written only when [outputs] names it (no default file name)
    suffixes: tuple[str, ...] = ()  # what an [outputs] name must end with (empty: any)
    example: str = ""  # the name an [outputs] hint suggests (its default, if it has one)
    # PEP 751 allows one dot in a pylock name: pylock.gpu.toml -> pylock.gpu-linux-64.toml
    joiner_after_stem: str | None = None  # the joiner for a stem other than `plain_stem`
    plain_stem: str | None = None

    def filename(self, outputs: Outputs) -> str | None:
        """The file name [outputs] gives it (None: an opt-in format nobody asked for)."""
        value: str | None = getattr(outputs, self.field)
        return value

    def wanted(self, intent: Intent) -> bool:
        """Whether the intent asks for this lock file."""
        if self.conda_side and intent.pip_only:
            return False
        return self.filename(intent.outputs) is not None

    def platform_file(self, filename: str, platform: str) -> str:
        """requirements.linux-64.lock for requirements.lock on linux-64."""
        path = Path(filename)
        joiner = "."
        if self.joiner_after_stem is not None and path.stem != self.plain_stem:
            joiner = self.joiner_after_stem
        return str(path.with_name(f"{path.stem}{joiner}{platform}{path.suffix}"))

    def relative(self, intent: Intent, platform: str | None = None) -> str:
        """The relative path of this lock file: requirements.lock, or requirements.linux-64.lock
        when the intent has several platforms (a file of every platform keeps its name)."""
        filename = self.filename(intent.outputs)
        if filename is None:  # opt-in only: asked for by its [outputs] key
            raise ValueError(f"the intent asks for no {self.kind} lock file")
        if not self.per_platform or len(intent.platforms) < 2:
            return filename
        return self.platform_file(filename, str(platform))


REQUIREMENTS = LockName(
    kind="requirements",
    field="requirements",
    per_platform=True,
    suffixes=(".lock", ".txt"),
    example="requirements.lock",
)
ENVIRONMENT = LockName(
    kind="environment",
    field="environment",
    per_platform=True,
    conda_side=True,
    suffixes=(".yml", ".yaml"),
    example="environment.yml",
)
PYLOCK = LockName(
    kind="pylock",
    field="pylock",
    per_platform=True,
    opt_in=True,
    joiner_after_stem="-",
    plain_stem="pylock",
    example="pylock.toml",
)
CONDA_LOCK = LockName(
    kind="conda-lock",
    field="conda_lock",
    per_platform=False,
    conda_side=True,
    suffixes=(".yml", ".yaml"),
    example="conda-lock.yml",
)

# in the order resolve writes them and check reads them: per platform requirements, environment,
# pylock; then conda-lock.yml (every platform)
LOCK_NAMES = (REQUIREMENTS, ENVIRONMENT, PYLOCK, CONDA_LOCK)
BY_KIND = {name.kind: name for name in LOCK_NAMES}
# as [outputs] lists them (the fields of Outputs): its keys, in the order its hints name them
OUTPUT_NAMES = tuple(
    sorted(LOCK_NAMES, key=lambda name: [f.name for f in fields(Outputs)].index(name.field))
)
