"""Where each torch build comes from, and the torch family whose builds must pair with torch's.

The CUDA stack decides per torch version whether PyPI's own wheel is the requested variant (no
local label) or the PyTorch index must serve it (`+cu118` from .../whl/cu118). The index is
consulted only when the resolver reaches a build that needs it; torchvision and torchaudio carry
the same label as the torch they go with (a PyPI torchvision is built against PyPI's torch).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from packaging.version import Version

# Names built per CUDA variant like torch, whose wheels must match torch's build (label and source).
PAIRED = frozenset({"torchvision", "torchaudio"})


@dataclass(frozen=True, slots=True)
class TorchBuild:
    version: str  # "2.1.2" (PyPI's own build) or "2.1.2+cu118"
    index_url: str | None  # None: PyPI; else the PyTorch index variant that alone publishes it
    label: str  # "torch 2.1 cu118", for messages
    pypi_variant: str | None = None  # the variant PyPI's wheel of this release is, on this platform
    # "2024-10-29": when this torch release came out (knowledge), for exclude-newer
    released: str | None = None

    @property
    def local(self) -> str:
        return Version(self.version).local or ""


def released_after_cutoff(build: TorchBuild, exclude_newer: datetime | None) -> bool:
    """A build of a torch release that came out after the cut-off: the PyTorch index cannot have
    had it then (its PEP 691 upload times, where it gives any, are no older than the release), so
    it is excluded without asking the index."""
    if exclude_newer is None or not build.released:
        return False
    return build.released > exclude_newer.date().isoformat()


def label_of(version: Version) -> str:
    """The local label a build must pair with: "" for PyPI's own wheels."""
    return version.local or ""


def index_urls(builds: list[TorchBuild] | None) -> dict[str, str]:
    """local label -> the PyTorch index URL that publishes builds with it."""
    return {b.local: b.index_url for b in builds or () if b.index_url}
