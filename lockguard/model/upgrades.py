"""What `--upgrade` and `--upgrade-package NAME[==VERSION]` ask of a resolve, parsed at the edge.
Light on purpose: a resolve answered by the resolution memo reads it (the memo key holds it)
without importing the resolver."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from lockguard.errors import InputError
from lockguard.model.names import canonical_name

UPGRADE_OPTION = "--upgrade-package"


@dataclass(frozen=True, slots=True)
class UpgradeRequest:
    """`--upgrade` (everything) and `--upgrade-package NAME[==VERSION]` (each name once)."""

    everything: bool = False
    packages: tuple[tuple[str, str | None], ...] = ()  # (canonical name, exact version or None)

    @property
    def named(self) -> tuple[str, ...]:
        return tuple(name for name, _version in self.packages)

    def key(self) -> str:
        """A stable text of the request (the resolution memo is keyed by it)."""
        if self.everything:
            return "everything"
        return ",".join(f"{n}=={v}" if v else n for n, v in sorted(self.packages))


def parse_upgrade_package(text: str) -> tuple[str, str | None]:
    """`NAME` or `NAME==VERSION` (exit 2 for anything else, naming the option)."""
    name, sep, version = text.strip().partition("==")
    name, version = name.strip(), version.strip()
    valid_name = bool(name) and all(c.isalnum() or c in "._-" for c in name) and name[0].isalnum()
    if not valid_name or (sep and not version) or any(c in name for c in "<>=!~;[ "):
        raise InputError(
            f"{UPGRADE_OPTION} {text!r}: expected NAME or NAME==VERSION",
            hint=f"e.g. {UPGRADE_OPTION} urllib3 or {UPGRADE_OPTION} torch==2.1.2",
        )
    if sep:
        try:
            Version(version)
        except InvalidVersion:
            raise InputError(
                f"{UPGRADE_OPTION} {text!r}: {version!r} is not a version (PEP 440)",
                hint=f"e.g. {UPGRADE_OPTION} {name}==1.2.3",
            ) from None
    return canonical_name(name), version or None


def upgrade_request(everything: bool, packages: Iterable[str]) -> UpgradeRequest:
    parsed: dict[str, str | None] = {}
    for text in packages:
        name, version = parse_upgrade_package(text)
        if name in parsed and parsed[name] != version and version and parsed[name]:
            raise InputError(
                f"{UPGRADE_OPTION} names {name} twice, with {parsed[name]} and {version}",
                hint="give each package once",
            )
        parsed[name] = version or parsed.get(name)
    return UpgradeRequest(everything, tuple(sorted(parsed.items())))
