"""Knowledge rules that `lockguard check` enforces, as constraints on names during resolution, so
that resolve refuses (exit 3, naming the rule and its source) what check would reject:

- LG129: a CUDA toolkit component wheel (nvidia-cuda-nvcc-cu12, cublas, ...) must belong to the
  intent's CUDA release (constraints/components.toml);
- LG121: an nvidia-*-cuXX wheel of another CUDA major has no place in the lock;
- LG128: a package with a GPU rule (flash-attn needs sm_80+, CUDA >= 11.7) is excluded when a GPU
  or the CUDA of the intent is below it.
"""

from __future__ import annotations

from collections.abc import Callable

from packaging.specifiers import SpecifierSet

from lockguard.knowledge.tables import Knowledge
from lockguard.model.names import cuda_family
from lockguard.model.target import Target
from lockguard.resolve.requirements import Req

NOTHING = SpecifierSet("<0")


def name_rules(knowledge: Knowledge, target: Target) -> Callable[[str], list[Req]]:
    cuda = target.cuda.version if target.cuda.mode == "version" else None
    asked = f'the intent\'s cuda = "{cuda}"' if cuda else ""

    def rules(name: str) -> list[Req]:
        out: list[Req] = []
        if cuda is not None:
            bound = knowledge.components.bound(cuda, name)
            family = cuda_family(name)
            if bound is not None:
                code = "LG121" if bound.specifier == NOTHING else "LG129"  # another major's wheel, or release
                out.append(Req(name, bound.specifier, constraint_only=True, by=asked,
                               why=f"{code}: {bound.reason}, {bound.origin}"))
            elif family and int(family) != cuda.major:
                out.append(Req(name, NOTHING, constraint_only=True, by=asked,
                               why=f"LG121: {name} is a CUDA {family} wheel; CUDA {cuda.major} wheels "
                                   "share its nvidia/ folder and overwrite its libraries"))
        rule = knowledge.gpu_rule(name)
        if rule is not None:
            for gpu in target.gpu_archs:
                if gpu.capability < rule.min_arch.capability:
                    out.append(Req(name, NOTHING, constraint_only=True, by=f"knowledge ({name} GPU rule)",
                                   why=f"LG128: {name} needs {rule.min_arch}+ but the intent has {gpu}: "
                                       f"{rule.why}; {rule.origin}"))
            if cuda is not None and cuda < rule.min_cuda:
                out.append(Req(name, NOTHING, constraint_only=True, by=f"knowledge ({name} GPU rule)",
                               why=f"LG128: {name} needs CUDA >= {rule.min_cuda}, the intent has {cuda}; "
                                   f"{rule.origin}"))
        return out

    return rules
