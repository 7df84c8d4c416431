"""The one adapter around py-rattler: MatchSpec parsing and version comparison.

(Solving, channel indexing and installing join this module as the conda side grows.)
"""

from __future__ import annotations


def matchspec_problem(text: str) -> str | None:
    """None when `text` is a valid conda MatchSpec, else rattler's reason."""
    import rattler

    try:
        rattler.MatchSpec(text)
    except Exception as exc:  # rattler raises its own InvalidMatchSpecError
        return str(exc)
    return None
