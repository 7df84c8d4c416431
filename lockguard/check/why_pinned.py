"""`lockguard explain PKG`: why a package is in the lock at its version, the requirement chain and
the knowledge rules. (Why a resolve found no solution is resolve/why_unsatisfiable.py.)

Pure: reads nothing. Takes the parsed requirements.lock (its `# via` annotations form the graph),
the conda specs of environment.yml, and the knowledge.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from packaging.version import Version

from lockguard.knowledge.row import Row
from lockguard.knowledge.tables import Knowledge
from lockguard.lockfiles.requirements_lock import RequirementsLock
from lockguard.model.names import canonical_name, spec_name


@dataclass
class Explanation:
    name: str
    version: str
    manager: str  # "pip" or "conda"
    chain: list[str] = field(default_factory=list)  # PKG==v <- parent==v <- ... <- intent
    parents: list[str] = field(default_factory=list)
    rules: list[dict[str, str]] = field(default_factory=list)  # {"rule", "origin", "source"}

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "version": self.version,
            "manager": self.manager,
            "chain": self.chain,
            "parents": self.parents,
            "rules": self.rules,
        }


def explain_pip(
    name: str, lock: RequirementsLock, knowledge: Knowledge, platform: str, intent_name: str
) -> Explanation | None:
    name = canonical_name(name)
    entry = lock.entries.get(name)
    if entry is None:
        return None
    out = Explanation(name, entry.version, "pip", parents=list(entry.via))
    versions = {n: e.version for n, e in lock.entries.items()}
    torch = versions.get("torch")
    out.chain = _chain(name, lock, intent_name, _pinners(name, versions, knowledge, platform))
    for hazard in knowledge.hazards:
        target = canonical_name(hazard.constrain.name)
        when = canonical_name(hazard.when.name)
        if target == name and when in versions and hazard.applies(when, versions[when], platform):
            out.rules.append(
                _rule(
                    f"{hazard.constrain} because {when} {versions[when]} is locked ({hazard.id}): "
                    f"{hazard.why}",
                    hazard,
                )
            )
    if torch:
        patch = knowledge.patch(torch)
        release = knowledge.release(patch.minor) if patch else None
        if name == "torch" and release and patch:
            local = Version(torch).local
            where = (
                f"the PyTorch index ({local})"
                if local
                else f"PyPI (its default build is CUDA {release.pypi_cuda})"
            )
            out.rules.append(
                _rule(
                    f"torch {torch} comes from {where}; torch {release.minor} was published for "
                    f"{', '.join(release.index_variants)} on the PyTorch index",
                    release,
                )
            )
            out.rules.append(
                _rule(f"torch {patch.version} is a PyPI patch release of {release.minor}", patch)
            )
        elif patch:
            for req in patch.requires:
                if canonical_name(req.name) == name:
                    out.rules.append(_rule(f"torch {torch} requires {req} (its CUDA stack)", patch))
        for pin_rule in knowledge.torch_pins:
            package = canonical_name(pin_rule.package)
            if package in versions and name in (package, "torch"):
                spec = pin_rule.pins.get(versions[package])
                if spec is not None:
                    out.rules.append(
                        _rule(f"{package} {versions[package]} pins torch{spec}", pin_rule)
                    )
    nvcc = knowledge.nvcc_rule(name)
    if nvcc:
        out.rules.append(_rule(f"{name} JIT ops: {nvcc.rule}", nvcc))
    gpu = knowledge.gpu_rule(name)
    if gpu:
        out.rules.append(
            _rule(f"{name} needs {gpu.min_arch}+ and CUDA >= {gpu.min_cuda}: {gpu.why}", gpu)
        )
    return out


def explain_conda(
    name: str, version: str, knowledge: Knowledge, intent_conda: tuple[str, ...]
) -> Explanation:
    out = Explanation(name, version, "conda")
    if any(spec_name(s) == name for s in intent_conda):
        out.chain = [f"{name}={version}", "conda = [...] in the intent"]
    for row in (*knowledge.python_specs, *knowledge.cuda_specs, *knowledge.build_specs):
        if any(_template_names(s, name) for s in row.specs):
            out.rules.append(_rule(f"{name} is part of the CUDA stack's conda specs", row))
    if not out.chain:
        out.chain = [
            f"{name}={version}",
            "the CUDA stack (cuda and python in the intent)"
            if out.rules
            else "a dependency of the conda specs (solver)",
        ]
    library = knowledge.library_for_conda(name)
    if library:
        out.rules.append(
            _rule(
                f"{name} is the same library as {', '.join(library.pypi)} on PyPI: "
                "only one side may bring it",
                library,
            )
        )
    return out


def _template_names(template: str, name: str) -> bool:
    base = template.split("=")[0]
    for platform in ("linux-64", "linux-aarch64", "linux-ppc64le"):
        if base.replace("{platform}", platform) == name:
            return True
    return base == name


def _pinners(name: str, versions: dict[str, str], knowledge: Knowledge, platform: str) -> set[str]:
    """The locked packages a knowledge row says pin `name`: torch for its CUDA stack's
    requirements (torch 2.6.0's triton==3.2.0), a hazard's package for what it constrains."""
    out = set()
    torch = versions.get("torch")
    patch = knowledge.patch(torch) if torch else None
    if patch is not None and any(canonical_name(r.name) == name for r in patch.requires):
        out.add("torch")
    for hazard in knowledge.hazards:
        when = canonical_name(hazard.when.name)
        if (
            canonical_name(hazard.constrain.name) == name
            and when in versions
            and hazard.applies(when, versions[when], platform)
        ):
            out.add(when)
    return out


def _chain(
    name: str, lock: RequirementsLock, intent_name: str, prefer: set[str] | None = None
) -> list[str]:
    """The shortest path from `name` up to the intent through the `via` annotations; among
    parents at the same distance, those in `prefer` (the packages that pin it) come first."""
    top = f"-r {intent_name}"
    previous: dict[str, str | None] = {name: None}
    queue = deque([name])
    end = None
    while queue:
        current = queue.popleft()
        entry = lock.entries.get(current)
        if entry is None:
            continue
        if top in entry.via:
            end = current
            break
        for parent in sorted(entry.via, key=lambda p: canonical_name(p) not in (prefer or ())):
            parent = canonical_name(parent)
            if parent not in previous:
                previous[parent] = current
                queue.append(parent)
    if end is None:
        return [f"{name}=={lock.entries[name].version}"]
    path = [end]
    child = previous[end]
    while child is not None:
        path.append(child)
        child = previous[child]
    path.reverse()
    return [f"{n}=={lock.entries[n].version}" for n in path] + [intent_name]


def _rule(text: str, row: Row) -> dict[str, str]:
    return {"rule": text, "origin": row.origin, "source": row.source}
