"""What an unreachable PyTorch index means for a resolution: exit 4 only when its builds were the
only way out, a warning only when the lock may depend on them.

The resolver meets an index-only build (torch 2.5 cu121) whenever it tries the CUDA stack's
preferred torch; meeting it says nothing about why a resolution failed or what the lock is.
`transformers==4.36.2` with `tokenizers>=0.20` fails on tokenizers whether or not the index
answers: exit 3 naming tokenizers (issue 23). So:

- a failure is the index's (exit 4) only when the requirements that clash include one on torch
  (or torchvision/torchaudio) that an unreached build would meet;
- a success warns that the lock may differ only when an unreached build meets every requirement
  the final resolution puts on its name: a lock whose torch is pinned by something else (an
  xformers pin, a PyPI build's pairing) cannot have taken it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from packaging.version import Version
from resolvelib.resolvers import Criterion

from lockguard.errors import SourceUnreachable
from lockguard.model.versions import CudaVersion
from lockguard.resolve.candidates import Candidate
from lockguard.resolve.provider import Cause, Unreached
from lockguard.resolve.requirements import Req
from lockguard.resolve.torch_builds import PAIRED, TorchBuild, label_of

FAMILY = frozenset({"torch"}) | PAIRED


def unreached_text(missed: Unreached) -> str:
    labels = list(dict.fromkeys(b.label for b in missed.builds)) or sorted(missed.names)
    what = ", ".join(labels)
    only = "is" if len(labels) == 1 else "are"
    return (
        f"{what} {only} published only on the PyTorch index ({missed.index_url}), "
        "which cannot be reached"
    )


def _meets(build: TorchBuild, reqs: Sequence[Req]) -> bool:
    version = Version(build.version)
    for req in reqs:
        if req.local is not None and label_of(version) != req.local:
            return False
        if not req.specifier.contains(version, prereleases=True):
            return False
    return True


def _needed(missed_list: list[Unreached], reqs_by_name: dict[str, list[Req]]) -> list[Unreached]:
    """The unreached indexes whose builds (or pages of a paired name) would meet the
    requirements."""
    out: list[Unreached] = []
    for missed in missed_list:
        torch_reqs = reqs_by_name.get("torch")
        if torch_reqs is not None and any(_meets(b, torch_reqs) for b in missed.builds):
            out.append(missed)
            continue
        for name in missed.names & PAIRED:
            reqs = reqs_by_name.get(name)
            # a paired name must carry torch's label: PyPI's ("") never comes from the index
            if reqs is not None and not any(r.local == "" for r in reqs):
                out.append(missed)
                break
    return out


def raise_if_the_only_way_out(unreached: Iterable[Unreached], causes: Iterable[Cause]) -> None:
    """SourceUnreachable (exit 4) when the clash is about a torch-family requirement that an
    unreached build would meet; otherwise return, and the caller explains the real conflict."""
    missed_list = [m for m in unreached if m.builds or m.names]
    if not missed_list:
        return
    reqs: dict[str, list[Req]] = {}
    for info in causes:
        req = info.requirement
        if req.name in FAMILY:
            reqs.setdefault(req.name, []).append(req)
    needed = _needed(missed_list, reqs)
    if not needed:
        return
    first = needed[0]
    alternatives = sorted({b.pypi_variant for m in needed for b in m.builds if b.pypi_variant})
    hint = 'use a mirror of the PyTorch index (pytorch-index = "https://..." in the intent)'
    if alternatives:
        cudas = " or ".join(
            f'cuda = "{CudaVersion.from_variant(v)}"' for v in alternatives if v != "cpu"
        )
        if cudas:
            hint += f", or the variant PyPI itself carries ({', '.join(alternatives)}: {cudas})"
    raise SourceUnreachable(
        f"{'; '.join(unreached_text(m) for m in needed)} ({first.error.message})",
        url=first.index_url,
        hint=hint,
    )


def lock_may_depend_on(
    unreached: Iterable[Unreached], criteria: Mapping[str, Criterion[Req, Candidate]]
) -> list[Unreached]:
    """The unreached indexes a successful resolution may owe its answer to: an unreached build
    meets every requirement the resolution puts on its name. `criteria`: resolvelib's result."""
    missed_list = [m for m in unreached if m.builds or m.names]
    if not missed_list:
        return []
    reqs: dict[str, list[Req]] = {}
    for key, criterion in criteria.items():
        name = key.split("[", 1)[0]
        if name in FAMILY:
            reqs.setdefault(name, []).extend(info.requirement for info in criterion.information)
    for missed in missed_list:
        for name in missed.names & FAMILY:
            reqs.setdefault(name, [])  # asked for, nothing in the lock bounds it: it may differ
    return _needed(missed_list, reqs)
