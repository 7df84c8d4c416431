"""The conda specs of a lock: the stack's, merged with the intent's own, and the virtual packages
that let a CPU laptop solve for a GPU machine."""

from __future__ import annotations

import re

from packaging.requirements import Requirement

from lockguard.knowledge.tables import Knowledge
from lockguard.model import codes
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.cuda_stack import CudaStack
from lockguard.model.names import spec_name
from lockguard.model.target import Target
from lockguard.resolve.stack import cuda_ceiling

_NAME = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")
LINUX_KERNEL = "5.10"  # the __linux a lock assumes (conda-lock's default too)


def _constraint(spec: str) -> str:
    match = _NAME.match(spec.split("::")[-1])
    return match.group(2).strip() if match else ""


def merge_specs(knowledge: Knowledge, stack: CudaStack, intent_specs: tuple[str, ...]) -> list[str]:
    """Stack specs first, then the intent's. A bare intent spec for a name the stack pins adopts the
    stack's pin; a library the pip side brings (nccl for nvidia-nccl-cu12) is pinned to pip's
    version, and a different version in the intent is a conflict."""
    merged = list(stack.conda_specs)
    by_name = {spec_name(s): s for s in merged}
    pip_pins = _pip_pins(stack)
    for spec in intent_specs:
        name, constraint = spec_name(spec), _constraint(spec)
        library = knowledge.library_for_conda(name)
        brought = (
            next(((p, v) for p, v in pip_pins.items() if p in library.pypi), None)
            if library
            else None
        )
        if brought and library:
            pypi_name, version = brought
            if constraint and not _agrees(constraint, version):
                raise Unsatisfiable(
                    f"the intent asks conda for {spec}, "
                    f"but torch {stack.torch} brings {pypi_name} {version} "
                    f"from PyPI: both would be loaded",
                    conflicts=[
                        Conflict(f"conda = [{spec!r}]", "intent"),
                        Conflict(
                            f"torch {stack.torch} requires {pypi_name}=={version}",
                            "constraints/torch.toml",
                        ),
                        Conflict(f"{name} and {pypi_name} are the same library", library.origin),
                    ],
                    hint=f"drop {name} from conda = [...] (torch's wheel brings it), "
                    f"or pin {name}={version}",
                )
            spec = f"{name}={version}"
        elif name in by_name:
            if constraint and spec != by_name[name]:
                origin = _origin_of(knowledge, stack.platform, name)
                rule = next((code for prefix, code in _RULES if name.startswith(prefix)), None)
                raise Unsatisfiable(
                    f"the intent's conda spec {spec!r} "
                    f"contradicts the CUDA stack's {by_name[name]!r}"
                    + (
                        f" ({rule}: `lockguard check` rejects such a lock; {origin})"
                        if rule
                        else f" ({origin})"
                    ),
                    conflicts=[
                        Conflict(f"conda = [{spec!r}]", "intent"),
                        Conflict(
                            f"{by_name[name]} (cuda = {stack.cuda or 'none'}, torch {stack.torch})",
                            origin,
                        ),
                    ],
                    hint="leave versions of stack packages to the cuda and python keys",
                )
            continue
        elif name.startswith(("gcc", "gxx")) and not constraint and stack.gcc_max:
            spec = f"{name}={stack.gcc_max}"
        if spec_name(spec) not in by_name:
            merged.append(spec)
            by_name[spec_name(spec)] = spec
    return merged


# which check rule a contradiction of a stack spec would break
_RULES = (
    ("cuda-version", codes.CONDA_CUDA_MISMATCH.code),
    ("cudatoolkit", codes.CONDA_CUDA_MISMATCH.code),
    ("cuda-nvcc", codes.DEEPSPEED_NVCC.code),
    ("gcc", codes.GCC_TOO_NEW.code),
    ("gxx", codes.GCC_TOO_NEW.code),
)


def _origin_of(knowledge: Knowledge, platform: str, name: str) -> str:
    """The knowledge row (constraints/conda.toml:NN) whose template gives the stack spec `name`."""
    values = {"python": "", "platform": platform, "glibc": "", "cuda": "", "gcc": ""}
    for row in (*knowledge.cuda_specs, *knowledge.build_specs, *knowledge.python_specs):
        if any(spec_name(template.format(**values)) == name for template in row.specs):
            return row.origin
    return "knowledge"


def _pip_pins(stack: CudaStack) -> dict[str, str]:
    out = {}
    for text in stack.pins:
        req = Requirement(text)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            out[req.name] = exact[0]
    return out


def _agrees(constraint: str, version: str) -> bool:
    wanted = constraint.lstrip("=").strip()
    return version == wanted or version.startswith(wanted.rstrip("*").rstrip(".") + ".")


def knowledge_pins(specs: list[str]) -> list[str]:
    """Version-level pins for the knowledge-only mode: the specs as they are, deduplicated."""
    return list(dict.fromkeys(specs))


def virtual_packages(
    knowledge: Knowledge, target: Target, stack: CudaStack
) -> list[tuple[str, str]]:
    """(name, version) of the virtual packages the target has, from the intent, not the host."""
    out: list[tuple[str, str]] = []
    if stack.cuda is not None:
        cuda = stack.cuda
        # the lock must run on the floor driver: solve for what it runs
        if target.driver is not None:
            ceiling = cuda_ceiling(knowledge, target.driver)
            cuda = ceiling if ceiling and ceiling.major == stack.cuda.major else stack.cuda
        out.append(("__cuda", str(cuda)))
    if target.is_linux:
        out += [("__glibc", target.glibc or "2.17"), ("__linux", LINUX_KERNEL), ("__unix", "0")]
    elif target.system == "Darwin":
        out += [("__osx", "11.0" if target.machine == "arm64" else "10.15"), ("__unix", "0")]
    else:
        out.append(("__win", "0"))
    out.append(
        (
            "__archspec",
            "1="
            + {
                "x86_64": "x86_64",
                "aarch64": "aarch64",
                "arm64": "arm64",
                "AMD64": "x86_64",
                "ppc64le": "ppc64le",
            }[target.machine],
        )
    )
    return out
