"""CUDA coherence inside one lock: the stack must hold together.

LG120 conda's CUDA differs from torch's CUDA  LG125 a knowledge hazard is broken (NumPy ABI, ...)
LG121 two wheels that install the same files  LG126 DeepSpeed JIT: nvcc does not match torch's CUDA
LG122 gcc newer than nvcc accepts             LG127 a package's exact torch pin is broken (xformers)
LG123 driver floor below what the CUDA needs  LG128 flash-attn cannot run on an intent GPU / CUDA
LG124 a GPU of the intent is missing from the torch build
LG129 a CUDA component wheel of another CUDA release (check/rules_components.py)
"""

from __future__ import annotations

from lockguard.check.lock_facts import LockFacts
from lockguard.check.rules_components import component_findings
from lockguard.knowledge.tables import Knowledge
from lockguard.model import codes
from lockguard.model.finding import ERROR, WARNING, Finding
from lockguard.model.intent import Intent
from lockguard.model.names import canonical_name
from lockguard.model.versions import build_runs_on

RELOCK = "fix the intent and run `lockguard resolve`; never edit the lock by hand"


def cuda_coherence(intent: Intent, facts: LockFacts, knowledge: Knowledge) -> list[Finding]:
    out: list[Finding] = []
    req, env = facts.requirements_path, facts.environment_path
    torch_line = facts.pip_lines.get("torch")
    conda_cuda = facts.conda_cuda()
    if conda_cuda and facts.torch_cuda and conda_cuda != facts.torch_cuda.major_minor:
        severity = ERROR if conda_cuda.major != facts.torch_cuda.major else WARNING
        out.append(
            codes.CONDA_CUDA_MISMATCH.finding(
                f"conda pins CUDA {conda_cuda} but {facts.torch_cuda_why}: extensions built with "
                f"this nvcc will not match torch.version.cuda {facts.torch_cuda}",
                RELOCK,
                env,
                facts.conda_lines.get("cuda-version") or facts.conda_lines.get("cudatoolkit"),
                severity=severity,
            )
        )
    for row, names in knowledge.wheel_files.clashes_among(facts.pip):
        shown = " and ".join(f"{n} {facts.pip[n]}" for n in names)
        out.append(
            codes.SHARED_FILES.finding(
                f"{shown} both install {row.path} ({row.origin}): each overwrites "
                "the other's files, and uninstalling one removes files the other needs",
                "they cannot share an environment; " + RELOCK,
                req,
                min(facts.pip_lines.get(n, 0) for n in names) or None,
            )
        )
    families = _cuda_families(facts, knowledge)
    if facts.torch_cuda and families and facts.torch_cuda.major not in families:
        major = sorted(families)[0]
        out.append(
            codes.CONDA_CUDA_MISMATCH.finding(
                f"{facts.torch_cuda_why}, but the lock has nvidia-*-cu{major} packages",
                RELOCK,
                req,
                torch_line,
            )
        )
    cuda = facts.nvcc() or conda_cuda or facts.torch_cuda
    toolkit = knowledge.toolkit(cuda) if cuda else None
    if toolkit:
        for name in sorted(n for n in facts.conda if n.startswith(("gcc_", "gxx_", "gcc", "gxx"))):
            try:
                major = int(facts.conda[name].split(".")[0])
            except ValueError:
                continue
            if major > toolkit.max_gcc:
                out.append(
                    codes.GCC_TOO_NEW.finding(
                        f"{name} {facts.conda[name]} is newer than nvcc {toolkit.version} accepts "
                        f"(gcc <= {toolkit.max_gcc}; {toolkit.origin})",
                        f"pin {name}={toolkit.max_gcc} (lockguard resolve does)",
                        env,
                        facts.conda_lines.get(name),
                    )
                )
    runtime = facts.torch_cuda or conda_cuda
    runtime_toolkit = knowledge.toolkit(runtime) if runtime else None
    if intent.driver and runtime_toolkit and intent.driver < runtime_toolkit.min_driver:
        out.append(
            codes.DRIVER_FLOOR_TOO_LOW.finding(
                f"CUDA {runtime_toolkit.version} needs driver >= {runtime_toolkit.min_driver}; "
                f"the intent's driver floor is {intent.driver} ({runtime_toolkit.origin})",
                "raise the driver floor, or lower cuda in the intent and relock",
                req if facts.torch_cuda else env,
                torch_line,
            )
        )
    if facts.torch and facts.torch_variant and facts.torch_variant != "cpu" and intent.gpu:
        arch_row = knowledge.arch_row(facts.torch_variant, facts.torch, facts.platform)
        if arch_row:
            for gpu in intent.gpu:
                if not build_runs_on(arch_row.archs, gpu):
                    out.append(
                        codes.GPU_NOT_IN_TORCH_BUILD.finding(
                            f"torch {facts.torch} ({facts.torch_variant}) was built for "
                            f"{' '.join(str(a) for a in arch_row.archs)}, not {gpu}: expect "
                            "'CUDA error: no kernel image is available'",
                            "lockguard constraints show torch X.Y lists the builds for each GPU",
                            req,
                            torch_line,
                        )
                    )
    out += _hazards(facts, knowledge)
    out += _extension_rules(intent, facts, knowledge)
    out += component_findings(intent, facts, knowledge)
    return out


def _cuda_families(facts: LockFacts, knowledge: Knowledge) -> dict[int, list[str]]:
    """The CUDA wheels of the knowledge in the lock (toolkit components, the wheels of
    constraints/shared_files.toml), by CUDA major; other names say nothing of a major."""
    out: dict[int, list[str]] = {}
    for name in facts.pip:
        component = knowledge.components.key_of(name)
        major = (component[1] or 13) if component else knowledge.wheel_files.major_of(name)
        if major is not None:
            out.setdefault(major, []).append(name)
    return out


def _hazards(facts: LockFacts, knowledge: Knowledge) -> list[Finding]:
    out = []
    for hazard in knowledge.hazards:
        when = canonical_name(hazard.when.name)
        if when not in facts.pip or not hazard.applies(when, facts.pip[when], facts.platform):
            continue
        name = canonical_name(hazard.constrain.name)
        version = facts.pip.get(name)
        if version and not hazard.constrain.contains(version):
            out.append(
                codes.KNOWLEDGE_HAZARD.finding(
                    f"{name} {version} with {when} {facts.pip[when]}: {hazard.why} "
                    f"(knowledge {hazard.id}: needs {hazard.constrain}; {hazard.origin})",
                    f"{hazard.source}; {RELOCK}",
                    facts.requirements_path,
                    facts.pip_lines.get(name),
                )
            )
    return out


def _extension_rules(intent: Intent, facts: LockFacts, knowledge: Knowledge) -> list[Finding]:
    out = []
    nvcc = facts.nvcc()
    for name in facts.pip:
        rule = knowledge.nvcc_rule(name)
        if rule and nvcc and facts.torch_cuda and not rule.accepts(nvcc, facts.torch_cuda):
            out.append(
                codes.DEEPSPEED_NVCC.finding(
                    f"{name}'s JIT ops need nvcc to match torch.version.cuda: "
                    f"conda's nvcc is {nvcc}, "
                    f"torch is {facts.torch_cuda} ({rule.origin})",
                    f"lock cuda-nvcc {facts.torch_cuda}, "
                    f"or set {rule.override_env}=1 at your own risk",
                    facts.requirements_path,
                    facts.pip_lines.get(name),
                )
            )
        gpu_rule = knowledge.gpu_rule(name)
        if gpu_rule:
            for gpu in intent.gpu:
                if gpu.capability < gpu_rule.min_arch.capability:
                    out.append(
                        codes.GPU_RULE_BROKEN.finding(
                            f"{name} needs {gpu_rule.min_arch}+ but the intent has {gpu}: "
                            f"{gpu_rule.why} ({gpu_rule.origin})",
                            "drop that GPU or the package",
                            facts.requirements_path,
                            facts.pip_lines.get(name),
                        )
                    )
            cuda = facts.torch_cuda
            if cuda and cuda < gpu_rule.min_cuda:
                out.append(
                    codes.GPU_RULE_BROKEN.finding(
                        f"{name} needs CUDA >= {gpu_rule.min_cuda}, the lock has {cuda}",
                        RELOCK,
                        facts.requirements_path,
                        facts.pip_lines.get(name),
                    )
                )
    for pin_rule in knowledge.torch_pins:
        package = canonical_name(pin_rule.package)
        version = facts.pip.get(package)
        spec = pin_rule.pins.get(version) if version else None
        if spec is not None and facts.torch and not spec.contains(facts.torch, prereleases=True):
            out.append(
                codes.TORCH_PIN_BROKEN.finding(
                    f"{package} {version} pins torch{spec}, the lock has torch {facts.torch} "
                    f"({pin_rule.origin})",
                    RELOCK,
                    facts.requirements_path,
                    facts.pip_lines.get(package),
                )
            )
    return out
