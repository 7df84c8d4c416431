"""lockguard: reproducible GPU Python environments."""

__version__ = "0.1.0"
