"""The PyPI project names the knowledge tables mention: a cheap list to suggest from when an
intent names a project no index has (`transformerz` -> transformers), without asking any index
for its list of every name."""

from __future__ import annotations

import re

from lockguard.knowledge.tables import Knowledge
from lockguard.model.names import canonical_name
from lockguard.model.stack_names import TORCH_FAMILY

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def project_names(knowledge: Knowledge) -> frozenset[str]:
    """Canonical names of the PyPI projects some table row names: the sdist rows and what they
    require, the libraries' and pythons' PyPI names, the hazards' packages and the wheels that
    share files, the extensions pinned to a torch, and the torch family itself."""
    names: set[str] = set(TORCH_FAMILY)
    for row in knowledge.sdist_metadata.rows:
        names.add(row.name)
        names.update(m.group(1) for m in map(_NAME.match, row.requires_dist) if m)
    for library in knowledge.libraries:
        names.update(library.pypi)
    names.update(row.pypi for row in knowledge.python_names)
    names.update(rule.package for rule in knowledge.torch_pins)
    for hazard in knowledge.hazards:
        names.update((hazard.when.name, hazard.constrain.name))
    for shared in knowledge.wheel_files.shared:
        names.update(shared.wheels)
    for separate in knowledge.wheel_files.separate:
        names.update(separate.wheels)
    return frozenset(canonical_name(n) for n in names if n)
