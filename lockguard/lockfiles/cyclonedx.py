"""A CycloneDX 1.6 JSON SBOM of a lock (`lockguard export --format cyclonedx`). Pure: the lock's
packages and facts in (an `Sbom`, which app/export_session.py reads from the lock files), text out.

Every pip package is a component with its purl (pkg:pypi/NAME@VERSION), the SHA-256 of each locked
file and, where the lock records them, the files' URLs (externalReferences of type
"distribution"); conda packages carry their channel and subdir in the purl (pkg:conda, as the purl
spec writes it). The CUDA stack facts are properties of the metadata component, named under
`lockguard:`. The bytes depend on the lock alone: no timestamp, a serial number derived from the
lock files' body hashes, components, properties and keys sorted.

`render(sbom) -> str` is this format's one entry point, shaped to become an entry of a registry of
lock formats (issue 34) as it is.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

SPEC_VERSION = "1.6"
SCHEMA = "http://cyclonedx.org/schema/bom-1.6.schema.json"
NAMESPACE = "lockguard:"
# uuid5's namespace for serial numbers: the same lock gives the same urn:uuid
_SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://cyclonedx.org/lockguard-sbom")
KNOWLEDGE_ONLY = (
    "knowledge-only: pinned from lockguard's knowledge, not solved; no build, URL or hash is "
    "known, and the version is the spec's (a prefix conda matches)"
)


@dataclass(frozen=True, slots=True)
class FileRef:
    """One locked file of a package: where it is downloaded from and its digests."""

    url: str
    sha256: str | None = None
    md5: str | None = None


@dataclass(frozen=True, slots=True)
class PipPackage:
    name: str  # canonical
    version: str
    hashes: tuple[str, ...]  # sha256 of each locked file (requirements.lock's --hash lines)
    files: tuple[FileRef, ...] = ()  # the files whose URL the lock records
    indexes: tuple[str, ...] = ()  # the index URLs to find it on, when no file URL is recorded
    via: tuple[str, ...] = ()  # the packages that require it ("" : the intent)


@dataclass(frozen=True, slots=True)
class CondaPackage:
    name: str
    version: str | None
    channel: str | None  # a name (conda-forge) or a channel URL
    subdir: str
    build: str | None = None
    file: FileRef | None = None
    spec: str | None = None  # knowledge-only: the MatchSpec as environment.yml writes it


@dataclass(frozen=True, slots=True)
class PlatformPackages:
    platform: str
    pip: tuple[PipPackage, ...] = ()
    conda: tuple[CondaPackage, ...] = ()
    conda_solved: bool = True
    facts: tuple[tuple[str, str], ...] = ()  # the CUDA stack facts: (name, value)


@dataclass(frozen=True, slots=True)
class Sbom:
    project: str
    tool_version: str
    platforms: tuple[PlatformPackages, ...]
    lock_files: tuple[tuple[str, str], ...]  # (relative path, body hash): the serial number's seed
    properties: tuple[tuple[str, str], ...] = ()  # of the whole lock (python, intent hash, ...)


def pypi_purl(name: str, version: str) -> str:
    return f"pkg:pypi/{_encode(name.lower().replace('_', '-'))}@{_encode(version)}"


def conda_purl(package: CondaPackage) -> str:
    """pkg:conda/NAME@VERSION?build=B&channel=C&subdir=S&type=T (qualifiers sorted, as the spec
    asks; a knowledge-only spec has no build and no type)."""
    qualifiers = {"build": package.build, "channel": package.channel, "subdir": package.subdir}
    if package.file is not None:
        filename = urlsplit(package.file.url).path.rsplit("/", 1)[-1]
        qualifiers["type"] = "tar.bz2" if filename.endswith(".tar.bz2") else "conda"
    query = "&".join(f"{k}={_encode(v, safe=':/')}" for k, v in sorted(qualifiers.items()) if v)
    version = f"@{_encode(package.version)}" if package.version else ""
    return f"pkg:conda/{_encode(package.name)}{version}" + (f"?{query}" if query else "")


def channel_of(url: str) -> tuple[str, str]:
    """(channel, subdir) of a conda package URL: `conda-forge` for anaconda.org's channels, else
    the channel's URL."""
    parts = urlsplit(url)
    folders = parts.path.rsplit("/", 2)  # [channel path, subdir, filename]
    if len(folders) < 3:
        return url, ""
    channel_path, subdir = folders[0], folders[1]
    if parts.netloc in ("conda.anaconda.org", "repo.anaconda.com") and channel_path.count("/") == 1:
        return channel_path.strip("/"), subdir
    return f"{parts.scheme}://{parts.netloc}{channel_path}", subdir


def render(sbom: Sbom) -> str:
    """The SBOM as CycloneDX 1.6 JSON text (indent 2, keys sorted, a final newline)."""
    several = len(sbom.platforms) > 1
    components, dependencies = [], []
    for platform in sbom.platforms:
        pip_refs = {
            p.name: _ref(platform.platform, pypi_purl(p.name, p.version)) for p in platform.pip
        }
        components += [_pip_component(platform.platform, p) for p in platform.pip]
        components += [_conda_component(platform, c) for c in platform.conda]
        dependencies += _pip_dependencies(platform.pip, pip_refs)
    root = _root_ref(sbom.project)
    direct = sorted(
        _ref(p.platform, pypi_purl(d.name, d.version))
        for p in sbom.platforms
        for d in p.pip
        if "" in d.via
    ) + sorted(_ref(p.platform, conda_purl(c)) for p in sbom.platforms for c in p.conda)
    dependencies.append({"ref": root, "dependsOn": direct})
    properties = list(sbom.properties)
    for platform in sbom.platforms:
        prefix = f"{platform.platform}:" if several else ""
        properties += [(prefix + name, value) for name, value in platform.facts]
    properties += [("lock-file", f"{path} sha256:{digest}") for path, digest in sbom.lock_files]
    document = {
        "$schema": SCHEMA,
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": serial_number(sbom),
        "version": 1,
        "metadata": {
            "tools": {
                "components": [
                    {"type": "application", "name": "lockguard", "version": sbom.tool_version}
                ]
            },
            "component": {
                "type": "application",
                "bom-ref": root,
                "name": sbom.project,
                "properties": _properties(properties),
            },
        },
        "components": sorted(components, key=lambda c: str(c["bom-ref"])),
        "dependencies": sorted(dependencies, key=lambda d: str(d["ref"])),
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def serial_number(sbom: Sbom) -> str:
    """urn:uuid of the lock: uuid5 of its files' body hashes and the platforms exported."""
    seed = "\n".join(
        [*(f"{path} {digest}" for path, digest in sorted(sbom.lock_files))]
        + [p.platform for p in sbom.platforms]
    )
    return f"urn:uuid:{uuid.uuid5(_SERIAL_NAMESPACE, seed)}"


def _pip_component(platform: str, package: PipPackage) -> dict[str, object]:
    purl = pypi_purl(package.name, package.version)
    component: dict[str, object] = {
        "type": "library",
        "bom-ref": _ref(platform, purl),
        "name": package.name,
        "version": package.version,
        "purl": purl,
        "properties": _properties([("platform", platform), ("package-manager", "pip")]),
    }
    if package.hashes:
        component["hashes"] = [_sha256(h) for h in sorted(set(package.hashes))]
    references = [_reference(f) for f in package.files]
    if not references:  # the lock records no file URL: the index's page of the project
        references = [
            {
                "type": "distribution",
                "url": f"{index.rstrip('/')}/{package.name}/",
                "comment": "the index page of the project (the lock records no file URL)",
            }
            for index in package.indexes
        ]
    if references:
        component["externalReferences"] = sorted(references, key=lambda r: str(r["url"]))
    return component


def _conda_component(platform: PlatformPackages, package: CondaPackage) -> dict[str, object]:
    purl = conda_purl(package)
    properties = [("platform", platform.platform), ("package-manager", "conda")]
    if package.channel:
        properties.append(("conda-channel", package.channel))
    if not platform.conda_solved:
        properties.append(("conda-side", KNOWLEDGE_ONLY))
        if package.spec:
            properties.append(("conda-spec", package.spec))
    component: dict[str, object] = {
        "type": "library",
        "bom-ref": _ref(platform.platform, purl),
        "name": package.name,
        "purl": purl,
        "properties": _properties(properties),
    }
    if package.version:
        component["version"] = package.version
    if package.file is not None:
        component["externalReferences"] = [_reference(package.file)]
        component["hashes"] = _hashes(package.file)
    return component


def _pip_dependencies(
    packages: tuple[PipPackage, ...], refs: dict[str, str]
) -> list[dict[str, object]]:
    """Each pip package and the packages it requires (requirements.lock's `# via`, reversed)."""
    children: dict[str, set[str]] = {name: set() for name in refs}
    for package in packages:
        for parent in package.via:
            if parent in children:
                children[parent].add(refs[package.name])
    return [{"ref": refs[name], "dependsOn": sorted(kids)} for name, kids in children.items()]


def _reference(file: FileRef) -> dict[str, object]:
    reference: dict[str, object] = {"type": "distribution", "url": file.url}
    if file.sha256 or file.md5:
        reference["hashes"] = _hashes(file)
    return reference


def _hashes(file: FileRef) -> list[dict[str, str]]:
    out = [_sha256(file.sha256)] if file.sha256 else []
    return out + ([{"alg": "MD5", "content": file.md5}] if file.md5 else [])


def _sha256(digest: str) -> dict[str, str]:
    return {"alg": "SHA-256", "content": digest}


def _properties(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": NAMESPACE + name, "value": value} for name, value in sorted(set(pairs))]


def _ref(platform: str, purl: str) -> str:
    """A component's bom-ref: its purl under its platform (a package may be locked for several)."""
    return f"{platform}:{purl}"


def _root_ref(project: str) -> str:
    return f"project:{project}"


def _encode(text: str, safe: str = ":") -> str:
    """Percent-encode a purl segment (`+` of a local version included) or, with `safe=":/"`, a
    qualifier value, as packageurl-python (the reference implementation) does."""
    return quote(text, safe=safe)
