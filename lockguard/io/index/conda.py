"""The one adapter around py-rattler: MatchSpec parsing, solving against channels with virtual
packages from the target (not the host), and installing locked records into a prefix.

rattler's API is async; it stays inside this module behind plain functions.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

from lockguard.errors import InstallFailed, SourceUnreachable
from lockguard.model.conflict import Unsatisfiable
from lockguard.model.lock import CondaRecord

CONDA_REQUEST_FACTOR = 4  # a channel request may take this many deadlines (_channel_client)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    # imported where used at run time (native, heavy: only a conda solve or install needs it)
    import rattler

    from lockguard.model.locked import LockedConda


def matchspec_problem(text: str) -> str | None:
    """None when `text` is a valid conda MatchSpec, else rattler's reason."""
    # rattler (native, heavy) only when a conda spec is checked or solved, here and below
    import rattler

    try:
        rattler.MatchSpec(text)
    except Exception as exc:  # rattler raises its own InvalidMatchSpecError
        return str(exc)
    return None


class RattlerSolver:
    """The CondaPort of `lockguard resolve`: one rattler solve per platform."""

    def __init__(self, cache_dir: Path, *, offline: bool = False) -> None:
        self.cache_dir = Path(cache_dir)
        self.offline = offline
        self._gateway: rattler.Gateway | None = None
        self.missing_locked: list[
            str
        ] = []  # "name version build" of locked records no channel has now

    def _gateway_for(self) -> rattler.Gateway:
        import rattler

        if self._gateway is None:
            config = rattler.SourceConfig(
                cache_action="force-cache-only" if self.offline else "cache-or-fetch"
            )
            self._gateway = rattler.Gateway(
                cache_dir=self.cache_dir, default_config=config, client=_channel_client()
            )
        return self._gateway

    def solve(
        self,
        specs: list[str],
        channels: tuple[str, ...],
        platform: str,
        virtual_packages: list[tuple[str, str]],
        exclude_newer: datetime | None,
        locked: Sequence[LockedConda] = (),
    ) -> list[CondaRecord]:
        """`locked`: the existing lock's records; the channels' own copies of them go to rattler as
        locked_packages (preferred where they still fit). A locked record no channel lists any
        more is not passed (rattler would take it from the lock as it is) and is named in
        `missing_locked`."""
        import rattler
        from rattler.exceptions import FetchRepoDataError, GatewayError, SolverError

        virtual = [_virtual(name, value) for name, value in virtual_packages]
        sources = [rattler.Channel(c) for c in channels]
        subdirs = [platform, "noarch"]

        async def solve_with_preferences():
            gateway = self._gateway_for()
            preferred = (
                await self._channel_copies(gateway, sources, subdirs, locked, exclude_newer)
                if locked
                else []
            )
            return await rattler.solve(
                # the intent's platform names (validated there);
                # rattler annotates its names as Literals
                sources,
                specs,
                gateway=gateway,
                platforms=subdirs,  # type: ignore[arg-type]
                locked_packages=preferred,
                virtual_packages=virtual,
                exclude_newer=exclude_newer,
                timestamp_policy="allow-missing",
                channel_relations="disabled",
            )

        try:
            # here, not at the top: matchspec_problem is on every command's path (60 ms)
            import asyncio

            records = asyncio.run(solve_with_preferences())
        except (GatewayError, FetchRepoDataError) as exc:
            raise SourceUnreachable(
                f"cannot read conda channel(s) {', '.join(channels)} for {platform}: "
                f"{_first_and_cause(exc)}",
                url=channels[0] if channels else None,
                hint="check the channel names or the network; where the channels are out of reach, "
                "`lockguard resolve --conda-from-knowledge` (or conda-from-knowledge = true in "
                "the intent) pins the conda side from lockguard's knowledge without a solve",
            ) from None
        except SolverError as exc:
            raise Unsatisfiable(
                f"the conda side has no solution for {platform}: {str(exc).strip()}",
                hint="the specs were: " + " ".join(specs),
            ) from None
        finally:
            # rattler's gateway keeps Python objects that its native (tokio) threads release; when
            # that happens during interpreter shutdown the process aborts ("PyGILState_Release:
            # thread state must be current"). Drop it now, while Python is fully alive.
            self._gateway = None
            gc.collect()
        return [_record(r) for r in records]

    async def _channel_copies(
        self,
        gateway,
        sources,
        subdirs,
        locked: Sequence[LockedConda],
        exclude_newer: datetime | None,
    ) -> list:
        wanted = {(r.name, r.version, r.build) for r in locked}
        found = {}
        listed = await gateway.query(
            sources,
            subdirs,
            sorted({r.name for r in locked}),
            recursive=False,
            channel_relations="disabled",
        )
        for records in listed:
            for record in records:
                key = (record.name.normalized, str(record.version), str(record.build))
                if key in wanted and key not in found:
                    found[key] = record
        preferred = []
        for key in sorted(wanted):
            record = found.get(key)
            if record is None:
                self.missing_locked.append(" ".join(key))
            elif not (exclude_newer and record.timestamp and record.timestamp > exclude_newer):
                preferred.append(record)  # one newer than the intent's cut-off is not preferred
        return preferred


def _channel_client() -> rattler.Client:
    """rattler's client for channel requests, with a bound on each: without one a channel that
    trickles its headers held the resolve for ever (issue 30). rattler takes one total limit per
    request (reqwest's), not io/index/http.py's rule, so the limit leaves room for conda-forge's
    whole repodata at MIN_RATE (CONDA_REQUEST_FACTOR times the deadline: 4 minutes, 60 MB at
    256 kB/s); a request past it is tried once more, as a timeout is there."""
    import rattler

    from lockguard.io.index.http import DEADLINE_FACTOR, request_timeout

    limit = max(1, round(request_timeout() * DEADLINE_FACTOR * CONDA_REQUEST_FACTOR))
    return rattler.Client.default_client(max_retries=1, timeout=limit)


def _virtual(name: str, value: str):
    import rattler

    version, _, build = value.partition("=")
    return rattler.GenericVirtualPackage(
        rattler.PackageName(name), rattler.Version(version), rattler.BuildString(build or "0")
    )


def _record(r) -> CondaRecord:
    noarch = str(r.noarch)
    noarch_kind = noarch.split('"')[1] if '"' in noarch else None
    timestamp = r.timestamp
    return CondaRecord(
        name=r.name.normalized,
        version=str(r.version),
        build=str(r.build),
        channel=r.channel.rstrip("/") if r.channel else "",
        subdir=str(r.subdir),
        url=r.url,
        md5=r.md5.hex() if r.md5 else "",
        sha256=r.sha256.hex() if r.sha256 else "",
        depends=tuple(r.depends),
        constrains=tuple(r.constrains),
        size=r.size,
        timestamp=int(timestamp.timestamp() * 1000) if timestamp else None,
        build_number=r.build_number,
        noarch=noarch_kind,
    )


def _first_and_cause(exc: Exception) -> str:
    """rattler's first line and, where it gives one, its innermost cause ("operation timed out")."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    causes = [line.removeprefix("Caused by:").strip() for line in lines[1:] if "Caused by" in line]
    first = _first_line(exc)
    return f"{first} ({causes[-1]})" if causes and causes[-1] not in first else first


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def install_locked(prefix: Path, packages: list[dict], platform: str, cache_dir: Path) -> None:
    """Install conda-lock.yml's conda records for `platform` into `prefix` with rattler (links
    exactly these records; packages of the prefix that are not locked are removed by rattler)."""
    import rattler
    from rattler.exceptions import InstallerError, TransactionError

    records = []
    for package in packages:
        if package.get("manager") != "conda" or package.get("platform") != platform:
            continue
        url = package["url"]
        subdir = url.rstrip("/").split("/")[-2]
        channel = url.rsplit("/", 2)[0]
        record = rattler.PackageRecord(
            name=package["name"],
            version=str(package["version"]),
            build=rattler.BuildString(str(package["build"])),
            build_number=0,
            subdir=subdir,
            depends=[f"{k} {v}".strip() for k, v in (package.get("dependencies") or {}).items()],
            md5=bytes.fromhex(package["hash"]["md5"]),
            sha256=bytes.fromhex(package["hash"]["sha256"])
            if package["hash"].get("sha256")
            else None,
        )
        records.append(rattler.RepoDataRecord(record, url.rsplit("/", 1)[-1], url, channel))
    installed = [
        rattler.PrefixRecord.from_path(p)
        for p in sorted((Path(prefix) / "conda-meta").glob("*.json"))
    ]
    try:
        import asyncio  # with rattler only (see solve)

        asyncio.run(
            rattler.install(
                records,
                target_prefix=prefix,
                cache_dir=cache_dir,
                installed_packages=installed,
                show_progress=False,
                execute_link_scripts=False,
            )
        )
    except (
        InstallerError,
        TransactionError,
        Exception,
    ) as exc:  # rattler's errors differ by version
        raise InstallFailed(
            f"conda install into {prefix} failed: {str(exc).strip().splitlines()[0]}"
        ) from None
