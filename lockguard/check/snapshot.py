"""What the static check looks at, read once by the CLI and handed to pure rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from lockguard.lockfiles.formats import CONDA_LOCK, ENVIRONMENT, PYLOCK, REQUIREMENTS, LockFormat
from lockguard.lockfiles.formats import format_of as _format_of

if TYPE_CHECKING:  # annotations only: each reader is imported when its kind of file is read
    from lockguard.lockfiles.environment_yml import EnvironmentFile
    from lockguard.lockfiles.formats import Parsed
    from lockguard.lockfiles.headers import Header
    from lockguard.lockfiles.pylock import PylockFile
    from lockguard.lockfiles.requirements_lock import RequirementsLock
    from lockguard.model.intent import Intent


# conda-lock.yml as PyYAML loads it (lockfiles/conda_lock.py's read_document checked its shape):
# its values are whatever YAML holds, read with .get() and defaults where optional
CondaLockDocument: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class LockFile:
    """One lock file as found on disk (text None: missing)."""

    path: str  # relative to the project root, as findings print it
    text: str | None
    kind: str  # the kind of one of lockfiles/formats.py's FORMATS
    platform: str | None = None
    header: Header | None = None
    parsed: Parsed | None = None  # what the format's parser made of it (None: not parsed)
    # what lockguard wrote under the header's body hash (for LG102), if known
    written: str | None = None

    @property
    def format(self) -> LockFormat:
        return _format_of(self.kind)

    def _parsed_as(self, wanted: LockFormat) -> Any:
        return self.parsed if self.format is wanted else None

    # the parsed file, typed by its format (None: another format's file, or not parsed)
    @property
    def requirements(self) -> RequirementsLock | None:
        return cast("RequirementsLock | None", self._parsed_as(REQUIREMENTS))

    @property
    def environment(self) -> EnvironmentFile | None:
        return cast("EnvironmentFile | None", self._parsed_as(ENVIRONMENT))

    @property
    def conda_lock(self) -> CondaLockDocument | None:
        return cast("CondaLockDocument | None", self._parsed_as(CONDA_LOCK))

    @property
    def pylock(self) -> PylockFile | None:
        return cast("PylockFile | None", self._parsed_as(PYLOCK))


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    intent: Intent
    intent_file: str
    files: tuple[LockFile, ...] = ()
    # other files: requirements*.txt, Dockerfile, ...
    repo_files: Mapping[str, str] = field(default_factory=dict)

    def of_kind(self, kind: str, platform: str | None = None) -> LockFile | None:
        return next(
            (
                f
                for f in self.files
                if f.kind == kind and (platform is None or f.platform in (None, platform))
            ),
            None,
        )
