"""The compatibility knowledge in `constraints/*.toml`, validated and queried (its files are read
by lockguard.io.knowledge.files)."""

from lockguard.knowledge.tables import Knowledge

__all__ = ["Knowledge"]
