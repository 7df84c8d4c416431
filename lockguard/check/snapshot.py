"""What the static check looks at, read once by the CLI and handed to pure rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # annotations only: each reader is imported when its kind of file is read
    from lockguard.lockfiles.environment_yml import EnvironmentFile
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
    kind: str  # "requirements" | "environment" | "conda-lock" | "pylock"
    platform: str | None = None
    header: Header | None = None
    requirements: RequirementsLock | None = None
    environment: EnvironmentFile | None = None
    conda_lock: CondaLockDocument | None = None
    pylock: PylockFile | None = None
    # what lockguard wrote under the header's body hash (for LG102), if known
    written: str | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    intent: Intent
    intent_file: str
    files: list[LockFile] = field(default_factory=list)
    # other files: requirements*.txt, Dockerfile, ...
    repo_files: dict[str, str] = field(default_factory=dict)

    def of_kind(self, kind: str, platform: str | None = None) -> LockFile | None:
        return next(
            (
                f
                for f in self.files
                if f.kind == kind and (platform is None or f.platform in (None, platform))
            ),
            None,
        )
