"""Knowledge rules that `lockguard check` enforces, as constraints on names during resolution, so
that resolve refuses (exit 3, naming the rule and its source) what check would reject:

- LG129: a CUDA toolkit component wheel (nvidia-cuda-nvcc-cu12, cublas, nvvm, cccl, ...) must belong
  to the intent's CUDA release (constraints/components.toml): a component of another CUDA major
  never does;
- LG121: two wheels that install the same file never share a lock (constraints/shared_files.toml,
  read from their RECORD): a name that requires one forbids the others, whatever the intent's CUDA;
- LG128: a package with a GPU rule (flash-attn needs sm_80+, CUDA >= 11.7) is excluded when a GPU
  or the CUDA of the intent is below it.
"""

from __future__ import annotations

from collections.abc import Callable

from packaging.specifiers import SpecifierSet

from lockguard.knowledge.tables import Knowledge
from lockguard.model import codes
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
            if bound is not None:
                out.append(
                    Req(
                        name,
                        bound.specifier,
                        constraint_only=True,
                        by=asked,
                        why=f"{codes.COMPONENT_OF_OTHER_CUDA.code}: {bound.reason}, {bound.origin}",
                    )
                )
        for clash in knowledge.wheel_files.clashes_of(name):
            # wherever `name` is required, the wheels that install its files are not
            out.append(Req(clash.other, NOTHING, constraint_only=True, by=name, why=clash.why))
        rule = knowledge.gpu_rule(name)
        if rule is not None:

            def refused(reason: str) -> Req:
                """`name` refused on this target: its GPU rule does not hold (with the rule's
                row)."""
                return Req(
                    name,
                    NOTHING,
                    constraint_only=True,
                    by=f"knowledge ({name} GPU rule)",
                    why=f"{codes.GPU_RULE_BROKEN.code}: {reason}; {rule.origin}",
                )

            for gpu in target.gpu_archs:
                if gpu.capability < rule.min_arch.capability:
                    out.append(
                        refused(
                            f"{name} needs {rule.min_arch}+ but the intent has {gpu}: {rule.why}"
                        )
                    )
            if cuda is not None and cuda < rule.min_cuda:
                out.append(refused(f"{name} needs CUDA >= {rule.min_cuda}, the intent has {cuda}"))
        return out

    return rules
