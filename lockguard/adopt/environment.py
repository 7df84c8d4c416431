"""A working environment as facts: its Python, torch and the CUDA its build names, the installed
top-level distributions pinned `==` (and, unless `top_level_only`, the distributions they require,
pinned too, so that `lockguard resolve` gives back the same versions rather than newer ones), and a
conda prefix's top-level conda packages.

A distribution no index can give back (installed from a local wheel, a directory, a VCS URL:
direct_url.json says so) is reported, not pinned.
"""

from __future__ import annotations

import re

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from lockguard.adopt.conda_env import conda_spec
from lockguard.adopt.facts import CHANNEL, CUDA, PIP, PYTHON, Origin, SourceFacts
from lockguard.model.json_types import JsonObject
from lockguard.model.names import INSTALLER_TOOLS, canonical_name
from lockguard.model.versions import CudaVersion

_CUDA_RUNTIME = re.compile(r"^nvidia-cuda-runtime-cu(\d+)$")
_CHANNEL_URL = re.compile(r"^https?://conda\.anaconda\.org/([^/]+)(?:/[^/]+)?/?$")


def environment_facts(
    captured: JsonObject, conda: list[JsonObject], label: str, *, top_level_only: bool = False
) -> SourceFacts:
    out = SourceFacts()
    origin = Origin(label)
    version = captured["version"]
    out.add(PYTHON, ".".join(version.split(".")[:2]), origin, f"Python {version}")
    dists = {canonical_name(d["name"]): d for d in captured["dists"]}
    parents = _requirers(dists, captured["markers"])
    conda_prefix = bool(conda)
    _cuda(dists, origin, out)
    top = sorted(n for n in dists if not parents.get(n))
    rest = sorted(n for n in dists if parents.get(n))
    for name in top + ([] if top_level_only else rest):
        dist = dists[name]
        pin = f"{name}=={_public(name, dist['version'])}"
        where = Origin(label)
        if name in INSTALLER_TOOLS and name in top:
            out.notes.append(
                f"{label}: {name} {dist['version']} left out "
                "(the environment's own installer tools)"
            )
            continue
        if conda_prefix and dist.get("installer") == "conda":
            continue  # installed by conda: the conda side below carries it
        direct = dist.get("direct_url")
        if direct:
            out.skip(
                where,
                pin,
                f"installed from {_source(direct)}: no index serves it, so a resolve cannot "
                "give it back (install it after the lock, or publish it to an index)",
            )
            continue
        why = (
            "installed, top level"
            if name in top
            else "installed, required by " + ", ".join(sorted(parents[name])[:3])
        )
        out.add(PIP, pin, where, why)
        if "+" in dist["version"] and name not in ("torch", "torchvision", "torchaudio"):
            out.notes.append(
                f"{label}: {name}=={dist['version']} has a local version label: only an index "
                "that serves this very build can give it back"
            )
    if conda_prefix:
        _conda(conda, label, out)
    return out


def _public(name: str, version: str) -> str:
    """torch 2.1.2+cu121 -> 2.1.2: lockguard picks the variant from cuda (the label is a CUDA
    fact)."""
    if name in ("torch", "torchvision", "torchaudio"):
        return version.split("+")[0]
    return version


def _source(direct: JsonObject) -> str:
    url = direct.get("url", "?")
    if direct.get("dir_info", {}).get("editable"):
        return f"an editable checkout {url}"
    if "vcs_info" in direct:
        return f"{direct['vcs_info'].get('vcs', 'vcs')} {url}"
    return str(url)


def _requirers(dists: dict[str, JsonObject], markers: JsonObject) -> dict[str, set[str]]:
    """name -> the installed distributions that require it (markers and requested extras
    evaluated)."""
    parents: dict[str, set[str]] = {}
    extras: dict[str, set[str]] = {name: {""} for name in dists}
    done: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for name, dist in dists.items():
            for extra in sorted(extras[name]):
                if (name, extra) in done:
                    continue
                done.add((name, extra))
                for text in dist.get("requires") or ():
                    try:
                        req = Requirement(text)
                        if req.marker is not None and not req.marker.evaluate(
                            {**markers, "extra": extra}
                        ):
                            continue
                    except (InvalidRequirement, UndefinedComparison, UndefinedEnvironmentName):
                        continue
                    child = canonical_name(req.name)
                    if child == name or child not in dists:
                        continue
                    parents.setdefault(child, set()).add(name)
                    for wanted in req.extras:
                        if wanted not in extras[child]:
                            extras[child].add(wanted)
                            changed = True
    return parents


def _cuda(dists: dict[str, JsonObject], origin: Origin, out: SourceFacts) -> None:
    torch = dists.get("torch")
    if torch is not None and torch.get("torch_cuda") != "?":
        cuda = torch.get("torch_cuda")
        out.add(
            CUDA,
            ".".join(cuda.split(".")[:2]) if cuda else "none",
            origin,
            f"torch {torch['version']} is a {'CUDA ' + cuda if cuda else 'CPU'} build "
            "(torch/version.py)",
        )
        return
    if torch is not None and "+" in torch["version"]:
        label = torch["version"].split("+", 1)[1]
        if label == "cpu" or re.fullmatch(r"cu\d{2,3}", label):
            cuda = "none" if label == "cpu" else str(CudaVersion.from_variant(label))
            out.add(CUDA, cuda, origin, f"torch {torch['version']}")
            return
    for name, dist in sorted(dists.items()):
        if _CUDA_RUNTIME.match(name):
            cuda = ".".join(dist["version"].split(".")[:2])
            out.add(CUDA, cuda, origin, f"{name} {dist['version']}")
            return


def _conda(records: list[JsonObject], label: str, out: SourceFacts) -> None:
    depended = {d.split()[0] for r in records for d in r.get("depends") or ()}
    counts: dict[str, int] = {}
    for record in records:
        channel = _channel_name(record.get("channel", ""))
        if channel:
            counts[channel] = counts.get(channel, 0) + 1
    for channel in sorted(counts, key=lambda c: (-counts[c], c)):
        out.add(CHANNEL, channel, Origin(label), f"{counts[channel]} conda packages")
    for record in sorted(records, key=lambda r: r["name"]):
        if record["name"] in depended and record["name"] not in (
            "cuda-version",
            "cudatoolkit",
            "sysroot_linux-64",
        ):
            continue
        conda_spec(f"{record['name']}={record['version']}", Origin(label), out)


def _channel_name(channel: str) -> str:
    match = _CHANNEL_URL.match(channel)
    return match.group(1) if match else channel.rstrip("/")
