"""The order in which a candidate's dependencies reach resolvelib: the ones that decide fastest
first.

resolvelib adds a candidate's dependencies one by one and, for each, asks whether any candidate
is left (`find_matches`, up to its first match); the first dependency with none rejects the
candidate. Which one fails first changes nothing in the answer (every dependency must have a
candidate), but everything before it is paid for: its index page, its first candidate's
metadata, an sdist built only to learn that it builds. sglang 0.5.3 pins torch==2.8.0, which has no
CUDA 13 build, and flashinfer-python==0.4.0rc3, an sdist: asked in the metadata's order, the sdist
was built (36 s) before torch said no; unpinned sglang with `cuda = "13.0"` paid that for each of
twenty versions (issue 23: 501 s, 729 requests).

So: knowledge constraints first (they bound versions, install nothing), then torch and its paired
builds (the CUDA stack decides them from the knowledge, without the network), then exact pins (one
version to look at), then the rest in the metadata's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from lockguard.resolve.requirements import PYTHON, Req, exact_version
from lockguard.resolve.torch_builds import PAIRED

_STACK = frozenset({"torch", PYTHON}) | PAIRED


def fastest_first(deps: Sequence[Req]) -> list[Req]:
    def rank(req: Req) -> int:
        if req.constraint_only:
            return 0
        if req.name in _STACK:
            return 1
        if exact_version(req.specifier):
            return 2
        return 3

    return sorted(deps, key=rank)  # stable: the metadata's order within a rank
