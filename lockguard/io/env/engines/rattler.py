"""The rattler engine: a conda lock's records (conda-lock.yml, solved and hashed) linked into a
conda prefix, inside a clean-install's transaction as uv or pip are for the Python side. The calls
into py-rattler stay in its one adapter module (io/index/conda.py, DESIGN.md: one adapter per
library); this is the engine the transaction names."""

from __future__ import annotations

from pathlib import Path

from lockguard.io.index.conda import install_locked


class RattlerEngine:
    name = "rattler"

    def install_records(
        self, prefix: Path, packages: list[dict], platform: str, cache_dir: Path
    ) -> None:
        """Link exactly conda-lock.yml's records for `platform` into `prefix` (raises
        InstallFailed with rattler's words)."""
        install_locked(prefix, packages, platform, cache_dir)
