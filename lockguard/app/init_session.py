"""`lockguard init`'s sequence: the refusals (an intent exists, no pyproject.toml to extend,
--top-level-only without --from-env), the intent's values from the options or adopted from files
or an environment (app/init_from.py), the document rendered, validated and written
(app/init_intent.py); an error in a value names the option or the adopted file it came from, never
the file that was not written."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from lockguard.app.init_from import adopted_values
from lockguard.app.init_intent import (
    environment_name,
    existing_intent,
    pyproject_text,
    validate_intent,
    with_conda_from_knowledge,
    write_intent,
)
from lockguard.app.reporting import Messages
from lockguard.errors import InputError
from lockguard.io.index.channel_probe import out_of_reach, probing
from lockguard.model.intent import DEFAULT_CHANNELS
from lockguard.model.intent_profiles import PROFILE_NAME
from lockguard.model.intent_write import (
    add_intent_to_pyproject,
    add_profile,
    new_intent_document,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class InitOutcome:
    """The intent written: where, and what it holds (for the line the command prints)."""

    target: Path
    in_pyproject: bool  # [tool.lockguard] in pyproject.toml, not lockguard.toml
    python: str
    cuda: str
    pip: int  # how many pip requirements
    conda: int  # how many conda specs
    channels: tuple[str, ...] = ()  # the conda channels the intent names ([]: a pip-only lock)
    # a channel this machine could not reach, and why: the intent pins the conda side from the
    # knowledge (conda-from-knowledge = true) so that resolve works here
    unreachable: str = ""


def init(
    ui: Messages,
    *,
    root: Path,
    python: str | None = None,
    cuda: str | None = None,
    channels: tuple[str, ...] = (),
    conda_specs: tuple[str, ...] = (),
    indexes: tuple[str, ...] = (),
    from_files: tuple[Path, ...] = (),
    from_env: Path | None = None,
    top_level_only: bool = False,
    pylock: bool = False,
    pyproject: bool = False,
    force: bool = False,
    packages: tuple[str, ...] = (),
    profile: str | None = None,
) -> InitOutcome:
    """Write the intent into `root` (lockguard.toml, or [tool.lockguard] of its pyproject.toml),
    its options as the command line gives them; nothing is written when a value is bad. With
    `profile`: add `[profiles.PROFILE]` (init_profile)."""
    if profile is not None:
        if from_files or from_env is not None or pylock or top_level_only:
            raise InputError(
                "--profile takes --python, --cuda, --channel, --conda, --index and packages",
                hint="write the project's intent first (with --from, --from-env or --pylock), "
                "then add each profile with `lockguard init --profile NAME`",
            )
        return init_profile(
            root=root,
            profile=profile,
            python=python,
            cuda=cuda,
            channels=channels,
            conda_specs=conda_specs,
            indexes=indexes,
            pyproject=pyproject,
            force=force,
            packages=packages,
        )
    target = root / ("pyproject.toml" if pyproject else "lockguard.toml")
    _refuse(
        root,
        target,
        pyproject=pyproject,
        force=force,
        lone_top_level=top_level_only and from_env is None,
    )
    if from_files or from_env is not None:
        adopted, adopted_notes, header = adopted_values(
            ui,
            files=from_files,
            env=from_env,
            python=python,
            cuda=cuda,
            indexes=indexes,
            top_level_only=top_level_only,
        )
        added, added_notes = _command_line(adopted, adopted_notes, channels, conda_specs, packages)
        given, notes = {**adopted, **added}, {**adopted_notes, **added_notes}
    else:
        notes, header = {}, []
        given = {
            "python": python or f"{sys.version_info.major}.{sys.version_info.minor}",
            "cuda": cuda or "none",
            "channels": list(channels) if channels else None,
            "conda": list(conda_specs),
            "pip": list(packages),
            "indexes": list(indexes),
        }
    values = {
        **given,
        "name": given.get("name") or environment_name(root),
        **({"outputs": {"pylock": "pylock.toml"}} if pylock else {}),
    }
    if pyproject:
        text = add_intent_to_pyproject(
            pyproject_text(target), values, force=force, path=target, notes=notes
        )
    else:
        text = new_intent_document(values, notes, header)
    chosen = tuple(values["channels"] if values.get("channels") is not None else DEFAULT_CHANNELS)
    unreachable = _unreachable(chosen)
    if unreachable:
        text = with_conda_from_knowledge(
            text,
            f"{unreachable} when `lockguard init` wrote this intent: the conda side is pinned "
            "from lockguard's knowledge, not solved on the channel. Delete this line once the "
            "channel can be reached.",
            in_pyproject=pyproject,
        )
    # validate before writing: a bad --cuda or package never reaches the disk
    try:
        validate_intent(text, target)
    except InputError as exc:
        raise _blame_the_source(exc, notes, written=target) from None
    write_intent(target, text)
    return InitOutcome(
        target=target,
        in_pyproject=pyproject,
        python=values["python"],
        cuda=values["cuda"],
        pip=len(values.get("pip") or []),
        conda=len(values.get("conda") or []),
        channels=chosen,
        unreachable=unreachable,
    )


def _unreachable(channels: tuple[str, ...]) -> str:
    """The first channel this machine cannot reach, and why ("" when all answer, when there are
    none, or with LOCKGUARD_CHANNEL_PROBE=0): one short request each (io/index/channel_probe)."""
    if not probing():
        return ""
    for channel in channels:
        why = out_of_reach(channel)
        if why:
            return f"the conda channel {channel} could not be reached ({why})"
    return ""


def _refuse(root: Path, target: Path, *, pyproject: bool, force: bool, lone_top_level: bool):
    """Exit 2 before anything is read: an intent exists (without --force), --pyproject without a
    pyproject.toml, --top-level-only without --from-env."""
    existing = existing_intent(root)
    if existing and not force:
        where = (
            f"{existing} [tool.lockguard]" if existing.name == "pyproject.toml" else str(existing)
        )
        raise InputError(
            f"an intent already exists: {where}",
            file=str(existing),
            hint="pass --force to replace it, or edit it by hand",
        )
    if pyproject and not target.is_file():
        raise InputError(
            f"{target} does not exist",
            file=str(target),
            hint="run `lockguard init` without --pyproject to write lockguard.toml",
        )
    if lone_top_level:
        raise InputError(
            "--top-level-only goes with --from-env",
            hint="add --from-env PREFIX, or drop --top-level-only",
        )


# the option (or argument) that gave each intent key its value
_OPTIONS = {
    "python": "--python",
    "cuda": "--cuda",
    "channels": "--channel",
    "conda": "--conda",
    "pip": "PACKAGES",
    "indexes": "--index",
}


def _blame_the_source(exc: InputError, notes: dict, *, written: Path) -> InputError:
    """An error in the intent about to be written names where the bad value came from (the option,
    or the adopted file and line), never a line of a file that was not written."""
    key = (exc.key or "").split(".")[0]
    source = notes.get(key)
    if isinstance(source, list):
        source = ", ".join(dict.fromkeys(s for s in source if s)) or None
    source = source if source and source != "command line" else _OPTIONS.get(key)
    if not source:
        return exc
    message = exc.message
    for prefix in (f"{exc.file}:{exc.line}: ", f"{exc.file}: "):
        if exc.file and message.startswith(prefix):
            message = message[len(prefix) :]
            break
    message = message.removeprefix(f"{exc.key}: ")
    hint = (
        f"{exc.hint}; nothing was written to {written.name}"
        if exc.hint
        else f"nothing was written to {written.name}"
    )
    return InputError(f"{source}: {message}", key=exc.key, hint=hint)


def _command_line(values: dict, notes: dict, channels, conda_specs, packages) -> tuple[dict, dict]:
    """What options given next to --from add to what the files say: the lists they extend, and
    those lists' notes ("command line" for each added item)."""
    added: dict = {}
    added_notes: dict = {}
    for key, items in (("channels", channels), ("conda", conda_specs), ("pip", packages)):
        if not items:
            continue
        current = list(values.get(key) or [])
        noted = notes.get(key)
        current_notes = list(noted) if isinstance(noted, list) else [noted] * len(current)
        for item in items:
            if item not in current:
                current.append(item)
                current_notes.append("command line")
        added[key], added_notes[key] = current, current_notes
    return added, added_notes


def init_profile(
    *,
    root: Path,
    profile: str,
    python: str | None = None,
    cuda: str | None = None,
    channels: tuple[str, ...] = (),
    conda_specs: tuple[str, ...] = (),
    indexes: tuple[str, ...] = (),
    pyproject: bool = False,
    force: bool = False,
    packages: tuple[str, ...] = (),
) -> InitOutcome:
    """`lockguard init --profile NAME`: `[profiles.NAME]` with the options given, added to this
    folder's intent (a new intent whose top level holds the Python when there is none). The
    profile takes what it does not set from the top level; nothing is written when a value is
    bad."""
    if not PROFILE_NAME.fullmatch(profile):
        raise InputError(
            f"--profile {profile!r} is not a profile name",
            hint="use lower-case letters, digits, '_' and '-' (the name goes into file names: "
            "requirements.NAME.lock)",
        )
    existing = existing_intent(root)
    values: dict[str, object] = {
        "python": python,
        "cuda": cuda,
        "channels": list(channels) if channels else None,
        "conda": list(conda_specs),
        "pip": list(packages),
        "indexes": list(indexes),
    }
    if existing is not None:
        target, in_pyproject = existing, existing.name == "pyproject.toml"
        text = pyproject_text(existing)
    elif pyproject:
        raise InputError(
            f"{root / 'pyproject.toml'} has no [tool.lockguard] to add a profile to",
            hint="run `lockguard init --pyproject` first",
        )
    else:
        target, in_pyproject = root / "lockguard.toml", False
        top = python or f"{sys.version_info.major}.{sys.version_info.minor}"
        values["python"] = None  # the project's Python, at the top level
        # the top level every profile starts from: this Python, CPU only unless a profile says
        text = new_intent_document({"python": top, "cuda": "none", "name": environment_name(root)})
    text = add_profile(text, profile, values, in_pyproject=in_pyproject, force=force, path=target)
    validate_intent(text, target)
    write_intent(target, text)
    return InitOutcome(
        target=target,
        in_pyproject=in_pyproject,
        python=python or "as the top level",
        cuda=cuda or "as the top level",
        pip=len(packages),
        conda=len(conda_specs),
        channels=tuple(channels),
    )
