"""`lockguard resolve` as one pure function: intent + target + knowledge + ports -> Lock.

Per platform: the CUDA stack from the knowledge, then the conda side (solved through the CondaPort,
or pinned from the knowledge), then the pip side with the Python packages conda provides treated as
installed. Conda specs depend on the torch release pip settles on (sysroot glibc), so when pip picks
a torch whose stack needs other conda specs, the conda side is solved again once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet

from lockguard.errors import InputError
from lockguard.knowledge.tables import Knowledge
from lockguard.model.conflict import Conflict, Unsatisfiable
from lockguard.model.cuda_stack import CudaStack
from lockguard.model.intent import Intent
from lockguard.model.lock import CondaSide, Lock, PlatformLock
from lockguard.model.locked import LockedConda, LockedPlatform
from lockguard.model.pip_lock import PipResolution
from lockguard.model.target import MachineFacts, Target, targets_for
from lockguard.model.wording import counted
from lockguard.resolve.candidates import CandidateFilter
from lockguard.resolve.conda_specs import knowledge_pins, merge_specs, virtual_packages
from lockguard.resolve.knowledge_rules import name_rules
from lockguard.resolve.pip_resolve import merged_requirements, resolve_pip
from lockguard.resolve.ports import CondaPort, PackageSource
from lockguard.resolve.preferences import Preferences
from lockguard.resolve.relock_notes import RelockNotes, relock_notes
from lockguard.resolve.stack import query_stacks, torch_spec
from lockguard.resolve.torch_builds import TorchBuild


@dataclass
class ResolveOptions:
    conda_from_knowledge: bool = False
    platforms: tuple[str, ...] = ()  # a subset of the intent's platforms (empty: all)
    progress: Callable[[str], None] = lambda _m: None
    warn: Callable[[str], None] = lambda _m: None
    # the existing lock as preferences, per platform (None: resolve from scratch), and where the
    # notes of a relock go (vanished and yanked locked versions, held-back upgrades)
    preferences: Callable[[str], Preferences | None] = lambda _platform: None
    locked: Callable[[str], LockedPlatform | None] = lambda _platform: None
    on_notes: Callable[[RelockNotes], None] = lambda _notes: None
    note: Callable[[str], None] = lambda _m: None  # facts worth knowing that are no warning
    detail: Callable[[str], None] = lambda _m: None  # more of them, for -v
    verbose: bool = False  # -v: the passed-over versions named all in one line


def resolve_lock(
    intent: Intent,
    knowledge: Knowledge,
    machine: MachineFacts | None,
    make_source: Callable[[Target, list[str] | None], PackageSource],
    conda: CondaPort | None,
    options: ResolveOptions,
) -> Lock:
    """`make_source(target, torch_versions)` builds the package source of a platform."""
    targets = targets_for(intent, machine)
    if options.platforms:
        unknown = set(options.platforms) - set(intent.platforms)
        if unknown:
            raise InputError(
                f"--platform {', '.join(sorted(unknown))} is not in the intent's platforms "
                f"({', '.join(intent.platforms)})",
                hint="add it to platforms = [...] in the intent",
            )
        targets = [t for t in targets if t.platform in options.platforms]
    return Lock(
        intent,
        tuple(
            _resolve_platform(intent, knowledge, t, make_source, conda, options) for t in targets
        ),
    )


def _resolve_platform(
    intent: Intent,
    knowledge: Knowledge,
    target: Target,
    make_source: Callable[[Target, list[str] | None], PackageSource],
    conda: CondaPort | None,
    options: ResolveOptions,
) -> PlatformLock:
    options.progress(f"{target.platform}: CUDA stack")
    stacks, torch_problem = _stacks(intent, knowledge, target)
    no_torch = query_stacks(knowledge, target, None, wants_torch=False)[0]
    first = stacks[0] if stacks else no_torch
    builds = _torch_builds(knowledge, target, stacks)
    # each has one
    source = make_source(target, [s.torch for s in stacks if s.torch] if stacks else None)
    knowledge_only = options.conda_from_knowledge or intent.conda_from_knowledge
    preferences = options.preferences(target.platform)
    tried: set[tuple[str, ...]] = set()
    stack = first
    while True:
        conda_side = _conda_side(
            intent,
            knowledge,
            target,
            stack,
            conda,
            knowledge_only,
            options,
            preferences.conda if preferences else (),
        )
        tried.add(stack.conda_specs)
        provided = _python_packages(knowledge, conda_side)
        options.progress(f"{target.platform}: pip side ({counted(len(intent.pip), 'requirement')})")
        pip = resolve_pip(
            intent.pip,
            source,
            target,
            torch_builds=builds,
            torch_problem=torch_problem,
            hazards=knowledge.hazards,
            conda_provided=provided,
            candidate_filter=CandidateFilter.of(target, intent),
            warn=options.warn,
            explain_torch=lambda spec: _torch_reason(knowledge, target, spec, intent.pytorch_index),
            name_rules=name_rules(knowledge, target),
            preferences=preferences,
            note=lambda text: options.note(f"{target.platform}: {text}"),
            everything=options.verbose,
        )
        # no torch: the stack without it
        final = _stack_for(pip, stacks) if pip.pin("torch") else no_torch
        final = final or first
        if final.conda_specs == stack.conda_specs or final.conda_specs in tried:
            stack = final
            break
        stack = final  # torch settled on a release whose conda specs differ: solve conda again
    _check_libraries(knowledge, conda_side, pip)
    if preferences is not None:
        options.on_notes(
            relock_notes(
                pip,
                preferences,
                options.locked(target.platform),
                source,
                CandidateFilter.of(target, intent),
                merged_requirements(intent.pip),
                lambda spec: _torch_reason(knowledge, target, spec, intent.pytorch_index),
            )
        )
    index_urls = tuple(dict.fromkeys([*intent.indexes, *(p.index_url for p in pip.pins)]))
    return PlatformLock(target, stack, pip, conda_side, index_urls)


def _stacks(
    intent: Intent, knowledge: Knowledge, target: Target
) -> tuple[list[CudaStack], Unsatisfiable | None]:
    spec = torch_spec(intent.pip)
    asks_torch = spec is not None
    try:
        return query_stacks(knowledge, target, spec, pytorch_index=intent.pytorch_index), None
    except Unsatisfiable as problem:
        if asks_torch or target.cuda.mode == "none":
            raise
        # torch is not asked for directly: only fail if something in the resolution needs it
        return [], problem


def _torch_builds(
    knowledge: Knowledge, target: Target, stacks: list[CudaStack]
) -> list[TorchBuild]:
    """Each allowed torch build with where it comes from, and the variant PyPI carries instead."""
    out = []
    for stack in stacks:
        torch = stack.torch
        if torch is None:  # never: the stacks of a torch query each name their torch
            continue
        minor = ".".join(torch.split("+")[0].split(".")[:2])
        release = knowledge.release(minor)
        pypi = release.pypi_cuda_for(target.platform) if release else None
        patch = knowledge.patch(torch)  # PyPI's upload of the release: no build of it is older
        out.append(
            TorchBuild(
                torch,
                stack.index_url,
                f"torch {minor} {stack.variant}",
                pypi.variant if pypi else None,
                patch.uploaded if patch else None,
            )
        )
    return out


def _torch_reason(
    knowledge: Knowledge, target: Target, spec: SpecifierSet, pytorch_index: str
) -> str | None:
    """Why the CUDA stack offers no torch for `spec` (for explanations), or None if it does."""
    try:
        query_stacks(knowledge, target, spec, pytorch_index=pytorch_index)
    except Unsatisfiable as problem:
        return problem.message
    return None


def _stack_for(pip: PipResolution, stacks: list[CudaStack]) -> CudaStack | None:
    torch = pip.pin("torch")
    if torch is None:
        return None
    return next((s for s in stacks if s.torch == torch.version), None)


def _conda_side(
    intent: Intent,
    knowledge: Knowledge,
    target: Target,
    stack: CudaStack,
    conda: CondaPort | None,
    knowledge_only: bool,
    options: ResolveOptions,
    locked: Sequence[LockedConda] = (),
) -> CondaSide | None:
    if intent.pip_only:
        return None
    specs = merge_specs(knowledge, stack, intent.conda)
    if intent.pip and "pip" not in specs:
        specs.append("pip")  # conda env create installs the pip: section with the env's own pip
    if knowledge_only:
        return CondaSide(specs=tuple(knowledge_pins(specs)), solved=False, channels=intent.channels)
    if conda is None:
        raise Unsatisfiable("no conda solver is available", hint="pass --conda-from-knowledge")
    virtual = virtual_packages(knowledge, target, stack)
    options.progress(
        f"{target.platform}: conda solve ({counted(len(specs), 'spec')}, "
        f"{counted(len(intent.channels), 'channel')})"
    )
    records = conda.solve(
        list(specs),
        intent.channels,
        target.platform,
        virtual,
        intent.exclude_newer,
        locked=list(locked),
    )
    return CondaSide(
        specs=tuple(specs),
        records=tuple(sorted(records, key=lambda r: r.name)),
        solved=True,
        channels=intent.channels,
        virtual_packages=tuple(f"{n}={v}" for n, v in virtual),
    )


def _python_packages(knowledge: Knowledge, side: CondaSide | None) -> dict[str, str]:
    """Python packages the conda side installs, by PyPI name (pip must not install them again)."""
    if side is None or not side.solved:
        return {}
    provided = {}
    for record in side.records:
        if record.name in ("python", "pip"):
            continue
        is_python_package = record.noarch == "python" or any(
            d.split()[0] in ("python", "python_abi") for d in record.depends
        )
        if is_python_package:
            provided[knowledge.pypi_name_of_conda(record.name)] = record.version
    return provided


def _check_libraries(knowledge: Knowledge, side: CondaSide | None, pip: PipResolution) -> None:
    """The same library from both sides (nccl and nvidia-nccl-cu12) must be the same version."""
    if side is None or not side.solved:
        return
    for record in side.records:
        library = knowledge.library_for_conda(record.name)
        if library is None:
            continue
        for pin in pip.pins:
            if pin.name in library.pypi and not _same_release(pin.version, record.version):
                raise Unsatisfiable(
                    f"the conda side installs {record.name} {record.version} "
                    "but the pip side installs "
                    f"{pin.name} {pin.version}: two copies of one library would be loaded",
                    conflicts=[
                        Conflict(f"{record.name} {record.version} (conda)", "conda solve"),
                        Conflict(
                            f"{pin.name} {pin.version} (pip, via {', '.join(pin.via)})",
                            "pip resolve",
                        ),
                        Conflict(
                            f"{record.name} and {pin.name} are the same library", library.origin
                        ),
                    ],
                    hint=f"drop {record.name} from the intent's conda list, "
                    f"or pin it to {pin.version}",
                )


def _same_release(a: str, b: str) -> bool:
    return a.split("+")[0].split(".")[:3] == b.split(".")[:3]
