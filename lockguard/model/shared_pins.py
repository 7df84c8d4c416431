"""What the other profiles of a project ask of one profile's resolve (issue 33): the versions it
must take so that a package every profile locks has one version everywhere, and the header lines
that say why it keeps another one where its facts forbid that version. Pure values."""

from __future__ import annotations

import json
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

HELD_BACK_KEY = "held-back"  # the header key of a recorded reason (lockguard-held-back: ...)


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPins:
    # (name, version, the profile that locks it): demanded as `--upgrade-package NAME==VERSION`
    # is (a constraint: the name is freed from this profile's own lock, its version set)
    demanded: tuple[tuple[str, str, str], ...] = ()
    # "numpy 1.26.4 (h100, mac lock 2.1.0): <why this profile cannot>", one per held-back name
    held_back: tuple[str, ...] = ()

    def key(self) -> str:
        """A stable text of what is asked (the resolution memo is keyed by it)."""
        if not (self.demanded or self.held_back):
            return ""
        return json.dumps([sorted(self.demanded), sorted(self.held_back)])


def held_back_names(header_values: list[str]) -> set[str]:
    """The names whose other version a lock file's `lockguard-held-back` lines explain."""
    return {value.split(" ", 1)[0] for value in header_values if value.strip()}


def public_version(version: str) -> str:
    """The version the profiles compare: torch's 2.5.1+cu124 and 2.5.1+cu121 are one version."""
    try:
        return str(Version(version).public)
    except InvalidVersion:
        return version
