"""LG129: CUDA toolkit component wheels that belong to another CUDA release than the lock's.

The intent's `cuda` (and the conda side's cuda-version) holds for every component wheel
(nvidia-cuda-runtime-cu12, nvidia-cuda-nvcc-cu12, cublas, cufft, ...), not only for torch's: a
ptxas newer than the driver allows fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA 13's nvcc
with the nvvm and crt of another release fails with `ptxas fatal: Unsupported .version`, and two
releases of one library in the nvidia/ folder shadow each other. Which versions belong to which
release is constraints/components.toml (NVIDIA's per-release pins); a component wheel of another
CUDA major belongs to none of the intent's.
"""

from __future__ import annotations

from lockguard.check.lock_facts import LockFacts
from lockguard.knowledge.tables import Knowledge
from lockguard.model import codes
from lockguard.model.finding import Finding
from lockguard.model.intent import Intent
from lockguard.model.versions import CudaVersion

HINT = "run `lockguard resolve`: it bounds every CUDA component wheel to the intent's CUDA release"


def component_findings(intent: Intent, facts: LockFacts, knowledge: Knowledge) -> list[Finding]:
    references: list[tuple[CudaVersion, str, str | None, int | None]] = []
    asked = intent.cuda.version
    if intent.cuda.mode == "version" and asked is not None:  # the "version" mode always has one
        references.append((asked.major_minor, f'the intent\'s cuda = "{asked}"', None, None))
    conda = facts.conda_cuda()
    if conda is not None and all(conda != ref for ref, _w, _f, _l in references):
        references.append(
            (
                conda,
                f"{facts.environment_path}'s cuda-version {conda}",
                facts.environment_path,
                facts.conda_lines.get("cuda-version") or facts.conda_lines.get("cudatoolkit"),
            )
        )
    out: list[Finding] = []
    for name in sorted(facts.pip):
        version = facts.pip[name]
        for cuda, what, _file, _line in references:
            bound = knowledge.components.bound(cuda, name)
            if bound is None or bound.allows(version):
                continue
            release = knowledge.components.release_of(name, version)
            belongs = (
                f"belongs to CUDA {release}"
                if release
                else "belongs to no CUDA release lockguard knows"
            )
            out.append(
                codes.COMPONENT_OF_OTHER_CUDA.finding(
                    f"{name} {version} {belongs}, but {what}: {bound.reason} ({bound.origin})",
                    HINT,
                    facts.requirements_path,
                    facts.pip_lines.get(name),
                )
            )
    return out
