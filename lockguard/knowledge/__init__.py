"""The compatibility knowledge in `constraints/*.toml`, loaded, validated and queried."""

from lockguard.knowledge.loader import load_knowledge
from lockguard.knowledge.tables import Knowledge

__all__ = ["Knowledge", "load_knowledge"]
