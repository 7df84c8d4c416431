"""Every finding code lockguard reports, in one place: the code, its default severity and what it
means. Findings and doctor checks are created with these constants, never with a literal "LGnnn";
README.md's code tables are tested against REGISTRY (tests/test_codes.py).

LG1xx the lock files against the intent and each other (`check`, and resolve's refusal gate)
LG2xx the installed environment against the lock (`check --env`, clean-install; doctor reports
      LG206 too)
LG3xx the machine and the environment (`doctor`)
LG4xx fleet collection (`fleet run` / `fleet report`)

The severity is the one a finding has in every command that reports it; a few rules choose
another by case, and the registry names those cases (`cases`): LG120 is a warning for a minor CUDA
mismatch, LG214 info for a .pth a package owns, LG223 an error when the bytecode is all a folder
holds, LG302 an error when torch loaded the library, LG304 an error when DeepSpeed's rule refuses
the pair, LG311 a warning when the probe's facts came with lines that are not its own. Producers
build their findings with `CODE.finding(...)` (doctor: `check.flag(CODE, ...)`), which takes the
severity from here and refuses one the registry does not name.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockguard.model.finding import ERROR, INFO, WARNING, Finding


@dataclass(frozen=True, slots=True)
class FindingCode:
    code: str  # stable, printed as is: "LG102"
    severity: str  # error, warning or info: what every command reports it as
    title: str  # one line: what the finding means
    cases: tuple[str, ...] = ()  # the other severities a rule gives it by case (module docstring)

    @property
    def severities(self) -> tuple[str, ...]:
        return (self.severity, *self.cases)

    def finding(
        self,
        message: str,
        hint: str | None = None,
        file: str | None = None,
        line: int | None = None,
        *,
        severity: str | None = None,
    ) -> Finding:
        """A Finding of this code with the registry's severity; `severity` only for one of the
        cases the registry names (anything else is a bug: ValueError)."""
        chosen = severity or self.severity
        if chosen not in self.severities:
            raise ValueError(
                f"{self.code} is {' or '.join(self.severities)} in the registry, not {chosen}"
            )
        return Finding(self.code, chosen, message, hint, file, line)


# -- LG1xx: the lock files against the intent --------------------------------------------------
LOCK_MISSING = FindingCode("LG100", ERROR, "a lock file is missing")
INTENT_CHANGED = FindingCode("LG101", ERROR, "the intent changed since the lock was written")
LOCK_HAND_EDITED = FindingCode("LG102", ERROR, "a lock file was edited by hand")
LOCK_NOT_LOCKGUARDS = FindingCode(
    "LG104", ERROR, "a lock file was not written by lockguard (no header)"
)
PIP_VIEWS_DIFFER = FindingCode("LG110", ERROR, "pip pins differ between the lock files")
CONDA_VIEWS_DIFFER = FindingCode("LG111", ERROR, "conda records differ between the lock files")
LOCK_CONTRADICTS_INTENT = FindingCode("LG112", ERROR, "a lock file says other than the intent")
SHARED_VERSION_DIFFERS = FindingCode(
    "LG113", ERROR, "profiles lock different versions of a package without a recorded reason"
)
CONDA_CUDA_MISMATCH = FindingCode(
    "LG120", ERROR, "conda's CUDA differs from torch's CUDA", (WARNING,)
)
SHARED_FILES = FindingCode("LG121", ERROR, "two wheels install the same file")
GCC_TOO_NEW = FindingCode("LG122", ERROR, "gcc newer than nvcc accepts")
DRIVER_FLOOR_TOO_LOW = FindingCode(
    "LG123", ERROR, "a driver floor below what the locked CUDA needs"
)
GPU_NOT_IN_TORCH_BUILD = FindingCode(
    "LG124", ERROR, "a GPU of the intent is missing from the locked torch build"
)
KNOWLEDGE_HAZARD = FindingCode(
    "LG125", ERROR, "a knowledge hazard is broken (NumPy 2 with a NumPy-1 torch, ...)"
)
DEEPSPEED_NVCC = FindingCode("LG126", ERROR, "DeepSpeed's JIT nvcc does not match torch's CUDA")
TORCH_PIN_BROKEN = FindingCode("LG127", ERROR, "a package's exact torch pin is broken (xformers)")
GPU_RULE_BROKEN = FindingCode(
    "LG128", ERROR, "a package cannot run on an intent GPU or CUDA (flash-attn)"
)
COMPONENT_OF_OTHER_CUDA = FindingCode(
    "LG129", ERROR, "a CUDA component wheel belongs to another CUDA release"
)
REQUIREMENTS_FILE_PIN = FindingCode(
    "LG130", ERROR, "a requirements*.txt / .in pin the lock does not satisfy"
)
DOCKER_BASE_IMAGE = FindingCode(
    "LG131", ERROR, "a Dockerfile base image with another CUDA or torch"
)
DOCKER_PIP_INSTALL = FindingCode(
    "LG132", ERROR, "a Dockerfile `pip install` pin the lock does not satisfy"
)
PROJECT_DEPENDENCY = FindingCode(
    "LG133", ERROR, "a pyproject.toml / setup.cfg dependency the lock does not satisfy"
)
CONDA_FROM_KNOWLEDGE = FindingCode(
    "LG140", WARNING, "`--strict`: the conda side was pinned from knowledge only"
)
PIN_WITHOUT_HASH = FindingCode("LG141", WARNING, "`--strict`: a pin has no hash")

# -- LG2xx: the installed environment against the lock -----------------------------------------
PACKAGE_MISSING = FindingCode("LG200", ERROR, "a locked package is missing")
OTHER_VERSION = FindingCode("LG201", ERROR, "a locked package is installed at another version")
NOT_IN_LOCK = FindingCode("LG202", ERROR, "a package is installed but not in the lock")
FILE_DIFFERS = FindingCode("LG203", ERROR, "a file no longer matches its RECORD")
RECORD_FILE_MISSING = FindingCode(
    "LG204", ERROR, "a file of a RECORD is missing (or a shared library has another size)"
)
LEGACY_EGG_INFO = FindingCode("LG205", WARNING, "a locked package installed as a legacy .egg-info")
TWO_DIST_INFOS = FindingCode(
    "LG206", ERROR, "one distribution installed twice in one folder (two .dist-info)"
)
UNOWNED_LIBRARY = FindingCode("LG210", ERROR, "a shared library no package owns")
UNOWNED_FILE = FindingCode("LG211", ERROR, "a file in a package's folder that is not in its RECORD")
ORPHAN_FOLDER = FindingCode(
    "LG212", ERROR, "a package folder or module that belongs to no distribution"
)
INSTALLED_TWICE = FindingCode("LG213", ERROR, "one distribution on two sys.path entries")
PTH_INJECTS = FindingCode(
    "LG214", WARNING, "a .pth file injects directories into sys.path", (INFO,)
)
MIXED_CUDA_WHEELS = FindingCode("LG215", ERROR, "nvidia packages of several CUDA majors")
DUPLICATE_SONAME = FindingCode("LG216", ERROR, "two files with one SONAME on the search path")
LOADER_PATH_COPY = FindingCode(
    "LG217", WARNING, "the loader's path holds another copy of a locked library"
)
USR_LOCAL_CUDA = FindingCode(
    "LG218", WARNING, "/usr/local/cuda points at another CUDA than the lock's"
)
RECORD_OUTSIDE_PREFIX = FindingCode(
    "LG219", ERROR, "a RECORD lists paths outside the prefix, or rows that name a folder"
)
SYMLINK_OUT = FindingCode("LG220", ERROR, "a symlink points out of the prefix")
KEPT_TOOL_CONFLICT = FindingCode(
    "LG221", WARNING, "a kept installer tool requires another version of a locked package"
)
INTERRUPTED_RUN = FindingCode(
    "LG222", ERROR, "an interrupted clean-install or restore left its transaction"
)
ORPHAN_BYTECODE = FindingCode("LG223", WARNING, "compiled bytecode whose source is gone", (ERROR,))
CONDA_RECORD_DIFFERS = FindingCode("LG230", ERROR, "a locked conda record is missing or different")

# -- LG3xx: doctor ------------------------------------------------------------------------------
DRIVER_TOO_OLD = FindingCode("LG300", ERROR, "the driver is too old for torch's CUDA")
ARCH_NOT_IN_BUILD = FindingCode("LG301", ERROR, "a GPU's architecture is not in torch's build")
LIBRARY_OUTSIDE_WHEELS = FindingCode(
    "LG302", WARNING, "a CUDA library loaded or reachable from outside the wheels", (ERROR,)
)
JIT_TOOLKIT_MISMATCH = FindingCode(
    "LG303", WARNING, "the toolkit JIT builds use is another CUDA than the lock's"
)
NVCC_TORCH_MISMATCH = FindingCode(
    "LG304", WARNING, "nvcc does not match torch.version.cuda", (ERROR,)
)
GCC_NEWER_THAN_NVCC = FindingCode("LG305", ERROR, "gcc newer than that nvcc accepts")
MIXED_NVIDIA_FAMILIES = FindingCode("LG306", ERROR, "-cu11 and -cu12 nvidia packages together")
DEV_SHM_SMALL = FindingCode("LG307", WARNING, "/dev/shm smaller than 1 GiB")
GPU_MEMORY_HELD = FindingCode("LG308", WARNING, "GPU memory held by processes that are gone")
TORCH_SEES_NO_CUDA = FindingCode("LG309", ERROR, "torch sees no CUDA while NVML sees GPUs")
INSTALLED_DIFFERS = FindingCode("LG310", ERROR, "installed versions differ from the lock")
IMPORT_FAILS = FindingCode(
    "LG311", ERROR, "the probe failed, or an installed GPU package fails to import", (WARNING,)
)
NO_DRIVER = FindingCode("LG312", INFO, "no NVIDIA driver on this machine")
SMOKE_FAILED = FindingCode("LG313", ERROR, "the smoke matmul failed")
CUDNN_MISMATCH = FindingCode("LG314", WARNING, "cuDNN in use differs from the installed wheel")

# -- LG4xx: fleet -------------------------------------------------------------------------------
NODE_UNREACHABLE = FindingCode("LG400", ERROR, "a node did not answer")
NODE_FAILED = FindingCode("LG401", ERROR, "a node failed (no lockguard, doctor failed)")
NODE_CHECK_FAILED = FindingCode("LG402", ERROR, "`check --env` failed on a node")

REGISTRY: dict[str, FindingCode] = {
    value.code: value for value in tuple(globals().values()) if isinstance(value, FindingCode)
}
