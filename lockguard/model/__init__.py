"""Frozen value types: versions, Intent, Target, Finding. Parse at the edge, validate here."""
