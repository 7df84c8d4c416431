"""`lockguard init --from FILE... / --from-env PREFIX`: existing files or a working environment
become the intent's values, each with a comment naming its file and line.

Reading is io/project (source_files, env_capture), the mapping is pure (lockguard.adopt); this
module wires them, says what was skipped or changed, and refuses contradictions (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lockguard.adopt.environment import environment_facts
from lockguard.adopt.facts import SourceFacts
from lockguard.adopt.mapping import adopt, usable
from lockguard.app.reporting import Messages
from lockguard.errors import InputError
from lockguard.io.project.env_capture import capture_environment
from lockguard.io.project.source_files import read_sources
from lockguard.model.wording import counted


def adopted_values(
    ui: Messages,
    *,
    files: tuple[Path, ...],
    env: Path | None,
    python: str | None,
    cuda: str | None,
    indexes: tuple[str, ...],
    top_level_only: bool,
) -> tuple[dict, dict, list[str]]:
    """(values, notes, header comment lines) for the intent writer."""
    facts = SourceFacts()
    if files:
        facts.extend(read_sources(list(files)))
    if env is not None:
        captured, conda = capture_environment(env)
        facts.extend(environment_facts(captured, conda, str(env), top_level_only=top_level_only))
    sources = [str(f) for f in files] + ([str(env)] if env is not None else [])
    for skipped in facts.skipped:
        ui.warn(f"skipped {skipped}")
    for note in facts.notes:
        ui.info(f"note: {note}")
    if not usable(facts):
        raise InputError(
            f"nothing usable in {', '.join(sources)}: no Python, CUDA, pip or conda requirement"
            + (
                f" ({counted(len(facts.skipped), 'line')} skipped, listed above)"
                if facts.skipped
                else ""
            ),
            file=sources[0] if len(sources) == 1 else None,
            hint="pass the files that install the environment (requirements.txt, environment.yml, "
            "Dockerfile, pyproject.toml), or write the intent with "
            "`lockguard init --python X.Y --cuda X.Y PKG...`",
        )
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    adopted = adopt(facts, python=python, cuda=cuda, indexes=indexes, running_python=running)
    if adopted.contradictions:
        hints = list(dict.fromkeys(c.hint for c in adopted.contradictions))
        raise InputError(
            "the files contradict each other (nothing was written):\n  "
            + "\n  ".join(str(c) for c in adopted.contradictions),
            key=adopted.contradictions[0].key,
            hint="; ".join(hints),
        )
    if adopted.undecided:
        hints = list(dict.fromkeys(u.hint for u in adopted.undecided))
        raise InputError(
            "a choice the files do not make (nothing was written):\n  "
            + "\n  ".join(str(u) for u in adopted.undecided),
            key=adopted.undecided[0].key,
            hint="; ".join(hints),
        )
    for message in adopted.messages:
        ui.info(f"note: {message}")
    header = [
        f"Adopted from {', '.join(sources)} by `lockguard init`; each value names where it came "
        "from."
    ]
    if facts.skipped:
        count = len(facts.skipped)
        header.append(
            f"{count} {'line was' if count == 1 else 'lines were'} not carried over "
            "(listed by `lockguard init`):"
        )
        header += [f"  {s}" for s in facts.skipped[:20]]
        if len(facts.skipped) > 20:
            header.append(f"  ... and {len(facts.skipped) - 20} more")
    return adopted.values, adopted.notes, header
