"""Core metadata of a distribution file, fetched as cheaply as possible and cached forever.

Order: `dependency-metadata` overrides (no fetch), for an sdist the knowledge's metadata of its
version (constraints/sdist_metadata.toml: no fetch, no build), the cache (by the file's sha256),
PEP 658 metadata (only where the index page advertises it, as pip and uv do), HTTP range
requests into the wheel, an sdist's static metadata (PKG-INFO of Metadata-Version >= 2.2 whose
Requires-Dist is not Dynamic, or pyproject.toml's static [project] table: io/index/sdist_static.py),
and last a PEP 517 `prepare_metadata_for_build_wheel` in an isolated build environment, one per set
of build requirements per run (io/index/build_env.py). A build that failed is remembered
(io/index/failed_builds.py) and not tried again until --refresh.

A `.metadata` file is a shortcut, never the only word: one that is missing, larger than 4 MB,
fails the sha256 the page gives, or is not this version's METADATA is set aside with a warning and
the wheel's own METADATA is read instead (which is then held to the same checks). An unadvertised
`<file>.metadata` is never asked for: a catch-all mirror answers 200 with an HTML page for any
path, and racing that answer against the range read made the same resolve pass or fail at random
(issue 30).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from email.parser import HeaderParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from lockguard.errors import BuildFailed, SourceUnreachable
from lockguard.io.index.build_env import BUILD_HINT as _BUILD_HINT
from lockguard.io.index.build_env import BuildEnvironments, BuildPreferences
from lockguard.io.index.cache import Cache
from lockguard.io.index.http import AnswerTooLarge, HttpClient
from lockguard.io.index.lazy_wheel import read_wheel_metadata
from lockguard.io.index.sdist_static import static_metadata
from lockguard.model.dist import DistFile, DistMetadata

# the largest METADATA lockguard reads (PyPI's biggest are ~1 MB)
MAX_METADATA_BYTES = 4 * 1024 * 1024


def parse_metadata(raw: bytes, how: str) -> DistMetadata:
    message = HeaderParser().parsestr(raw.decode("utf-8", errors="replace"))
    return DistMetadata(
        name=message.get("Name", ""),
        version=message.get("Version", ""),
        requires_dist=tuple(message.get_all("Requires-Dist") or ()),
        requires_python=message.get("Requires-Python"),
        how=how,
    )


def metadata_problem(metadata: DistMetadata, name: str, version: str) -> str | None:
    """Why metadata cannot be trusted for the file of `name` `version` (None: it can). A lock built
    on garbage metadata would silently miss dependencies, so garbage is an error, never 'none'."""
    if not metadata.name.strip() or not metadata.version.strip():
        return "it has no Name or Version field (empty or not core metadata)"
    if canonicalize_name(metadata.name) != canonicalize_name(name):
        return f"it names the project {metadata.name!r}, not {name!r}"
    try:
        if Version(metadata.version) != Version(version):
            return f"it says version {metadata.version!r}, the file name says {version!r}"
    except InvalidVersion:
        return f"its Version {metadata.version[:80]!r} is not a PEP 440 version"
    for text in metadata.requires_dist:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            return (
                f"its Requires-Dist {text[:120]!r} does not parse "
                f"({str(exc).splitlines()[0][:160]})"
            )
    if metadata.requires_python:
        try:
            SpecifierSet(metadata.requires_python)
        except InvalidSpecifier:
            return f"its Requires-Python {metadata.requires_python[:80]!r} does not parse"
    return None


def synthesize_metadata(
    name: str, version: str, requires_dist, requires_python: str | None
) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires_dist]
    return ("\n".join(lines) + "\n").encode()


class MetadataFetcher:
    def __init__(
        self,
        http: HttpClient,
        cache: Cache,
        *,
        offline: bool = False,
        overrides: dict[tuple[str, str], bytes] | None = None,
        warn: Callable[[str], None] = lambda _m: None,
        failed_builds=None,
        on_build: Callable[[str, str, str], None] = lambda _event, _filename, _detail: None,
        known: Callable[[str, str], bytes | None] | None = None,
        builds: BuildEnvironments | None = None,
        build_preferences: BuildPreferences = BuildPreferences(),  # noqa: B008 (frozen)
    ) -> None:
        # the run's shared build environments (io/index/build_env.py) and what they prefer
        self.builds = builds
        self.build_preferences = build_preferences
        # (name, version) -> core metadata lockguard's knowledge gives an sdist of it
        self.known = known
        self.failed_builds = failed_builds  # io/index/failed_builds.FailedBuilds, or None: no memo
        # (event, sdist file name, detail): "start", the build's phases ("env", "install",
        # "prepare"), then "end" or "failed"; builds take long, progress says so
        self.on_build = on_build
        self.http = http
        self.cache = cache
        self.offline = offline
        self.overrides = {
            (canonicalize_name(n), str(Version(v))): m for (n, v), m in (overrides or {}).items()
        }
        self.warn = warn
        self.counts: dict[str, int] = {}

    def fetch(self, name: str, version: str, file: DistFile) -> DistMetadata:
        override = self.overrides.get((canonicalize_name(name), str(Version(version).public)))
        if override is not None:
            return self._count(parse_metadata(override, "override"))
        # a wheel's own METADATA is cheaper and exact
        if not file.is_wheel and self.known is not None:
            known = self.known(name, version)
            if known is not None:
                return self._count(parse_metadata(known, "knowledge"))
        key = file.sha256 or "url-" + hashlib.sha256(file.url.encode()).hexdigest()
        cached = self.cache.get_metadata(key)
        if cached is not None and _advertised_sha256(file) not in (
            None,
            hashlib.sha256(cached).hexdigest(),
        ):
            # not the METADATA the index vouches for (PEP 658's hash),
            # as pip and uv check it: fetched again
            self.cache.discard_metadata(key)
            cached = None
        if cached is not None:
            return self._count(parse_metadata(cached, "cache"))
        if self.offline:
            raise SourceUnreachable(
                f"--offline: the metadata of {file.filename} is not in the cache",
                url=file.url,
                hint="run once without --offline to fill the cache",
            )
        raw, how = self._fetch(file, name, str(Version(version)))
        if len(raw) > MAX_METADATA_BYTES:
            raise SourceUnreachable(
                f"the METADATA of {file.filename} is {len(raw) / 1e6:.1f} MB, more than "
                f"lockguard reads ({MAX_METADATA_BYTES // 2**20} MB): {_where(file)}",
                url=file.url,
                hint="the index serves a broken file; use another index or mirror",
            )
        metadata = parse_metadata(raw, how)
        problem = metadata_problem(metadata, name, str(Version(version)))
        if problem and how in (
            "pkg-info",
            "pyproject",
            "pep517",
        ):  # pip discards such an sdist too, and goes on
            raise BuildFailed(
                f"the metadata of {file.filename} ({_how(how)}) is unusable: {problem}",
                filename=file.filename,
            )
        if problem:
            raise SourceUnreachable(
                f"the metadata of {file.filename} ({_how(how)}, {_where(file)}) is unusable: "
                f"{problem}",
                url=file.url,
                hint="the index serves broken metadata: use another index or mirror, "
                "or give this version's metadata in the intent with [[dependency-metadata]]",
            )
        self.cache.put_metadata(key, raw)
        return self._count(metadata)

    def _count(self, metadata: DistMetadata) -> DistMetadata:
        self.counts[metadata.how] = self.counts.get(metadata.how, 0) + 1
        return metadata

    def _fetch(self, file: DistFile, name: str, version: str) -> tuple[bytes, str]:
        if not file.is_wheel:
            return self._sdist(file, version)
        if file.metadata:  # advertised (PEP 658/714): the shortcut, when it holds up
            raw = self._pep658(file, name, version)
            if raw is not None:
                return raw, "pep658"
        raw, refused = read_wheel_metadata(self.http, file.url)
        if refused:
            self.warn(
                f"{file.url.split('/')[2]} refused HTTP range requests: downloaded all of "
                f"{file.filename} to read its METADATA"
            )
            return raw, "download"
        return raw, "range"

    def _pep658(self, file: DistFile, name: str, version: str) -> bytes | None:
        """The advertised `.metadata` of a wheel, or None when it does not hold up (the caller
        reads the wheel instead). A timeout or a lost connection is raised: the index is not
        answering, and its wheels would not come either."""
        if file.url.startswith("file://"):
            return None
        url = file.url.split("#", 1)[0] + ".metadata"
        try:
            answer = self.http.get(url, max_bytes=MAX_METADATA_BYTES)
        except AnswerTooLarge:
            answer = None
        problem = None
        if answer is None:
            problem = f"it is larger than {MAX_METADATA_BYTES // 2**20} MB"
        elif answer.status != 200:
            problem = f"HTTP {answer.status}"
        else:
            expected = _advertised_sha256(file)
            if expected and hashlib.sha256(answer.content).hexdigest() != expected:
                problem = "it does not match its advertised sha256"
            else:
                problem = metadata_problem(parse_metadata(answer.content, "pep658"), name, version)
        if problem is None and answer is not None:
            return answer.content
        self.warn(
            f"{file.filename}.metadata, which the index advertises, is unusable ({problem}); "
            "reading the wheel's own METADATA instead"
        )
        return None

    def _sdist(self, file: DistFile, version: str) -> tuple[bytes, str]:
        remembered = (
            self.failed_builds.recall(file.sha256) if self.failed_builds and file.sha256 else None
        )
        if remembered is not None:  # the same sdist failed in this build environment before
            raise BuildFailed(
                f"{remembered} (remembered from an earlier run: --refresh builds it again)",
                filename=file.filename,
                hint=_BUILD_HINT,
            )
        answer = self.http.get(file.url)
        if answer.status != 200:
            raise SourceUnreachable(f"{file.url}: HTTP {answer.status}", url=file.url)
        archive = answer.content
        if file.sha256 and hashlib.sha256(archive).hexdigest() != file.sha256:
            raise SourceUnreachable(
                f"{file.filename}: sha256 does not match the index", url=file.url
            )
        static = static_metadata(file.filename, version, archive)
        if static is not None:
            return static
        return self._build(file, archive), "pep517"

    def _build(self, file: DistFile, archive: bytes) -> bytes:
        if self.builds is None:
            self.builds = BuildEnvironments(())
        self.on_build("start", file.filename, "")
        try:
            built = self.builds.prepare_metadata(
                file.filename, archive, prefer=self.build_preferences, on_build=self.on_build
            )
        except BuildFailed as failure:
            self.on_build("failed", file.filename, failure.message)
            if self.failed_builds and file.sha256 and failure.lasting:
                self.failed_builds.remember(file.sha256, failure.message)
            raise
        self.on_build("end", file.filename, "")
        return built


def _advertised_sha256(file: DistFile) -> str | None:
    """The sha256 of the file's METADATA that the index page gives (PEP 658/714), if any."""
    digest = file.metadata.get("sha256") if isinstance(file.metadata, dict) else None
    return digest.lower() if isinstance(digest, str) and digest else None


def _where(file: DistFile) -> str:
    return "from " + (file.url.rsplit("/", 1)[0] + "/" if "://" in file.url else file.url)


def _how(how: str) -> str:
    return {
        "pep658": "its PEP 658 .metadata file",
        "range": "read from the wheel",
        "download": "read from the wheel",
        "pkg-info": "the sdist's PKG-INFO",
        "pyproject": "the sdist's pyproject.toml",
        "pep517": "built from the sdist",
    }.get(how, how)
