"""`[profiles.NAME]`: one project, several kinds of machine (issue 33).

Each profile is the top-level intent with the profile's keys laid over it: a scalar key replaces
the top-level one, the `pip` and `conda` lists are added to the top-level lists. A profile's lock
files are named after it (requirements.h100.lock, environment.h100.yml, conda-lock.h100.yml,
pylock.h100.toml: PEP 751's own `pylock.<name>.toml`), so `[outputs]` belongs to the project and a
profile may not override it. model/intent_parse.py's reader calls `profile_tables` and
`profile_intent`; every error names the file, the line and `profiles.NAME.key`. Pure.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lockguard.model.intent import Intent, IntentSource, Outputs
from lockguard.model.intent_fields import Reader, TomlTable
from lockguard.model.intent_values import quoted as _q
from lockguard.model.lock_names import OUTPUT_NAMES

PROFILE_NAME = re.compile(r"[a-z0-9_-]+", re.ASCII)
ADDED_LISTS = ("pip", "conda")  # a profile's list is added to the top-level one
NOT_IN_PROFILE = ("outputs", "profiles")


def profile_tables(
    reader: Reader, data: TomlTable, top_keys: tuple[str, ...]
) -> dict[str, TomlTable]:
    """The `[profiles]` table checked: each name `[a-z0-9_-]+`, each profile a table of keys a
    profile may set (every top-level key but `outputs` and `profiles`)."""
    table = data.get("profiles")
    if table is None:
        return {}
    if not isinstance(table, dict) or not table:
        raise reader.fail(
            "profiles",
            "must be a table of profiles" if not isinstance(table, dict) else "names no profile",
            hint='write [profiles.NAME] tables, e.g. [profiles.h100] with cuda = "12.4"',
        )
    allowed = tuple(k for k in top_keys if k not in NOT_IN_PROFILE)
    out: dict[str, TomlTable] = {}
    for name, profile in table.items():
        if not PROFILE_NAME.fullmatch(name):
            raise reader.fail(
                f"profiles.{name}",
                f"{_q(name)} is not a profile name",
                hint="use lower-case letters, digits, '_' and '-' (the name goes into file names: "
                "requirements.NAME.lock)",
            )
        if not isinstance(profile, dict):
            raise reader.fail(
                f"profiles.{name}",
                "must be a table",
                hint=f'write [profiles.{name}] with the keys it overrides, e.g. cuda = "12.4"',
            )
        for key in NOT_IN_PROFILE:
            if key in profile:
                raise reader.fail(
                    f"profiles.{name}.{key}",
                    f"a profile cannot set {key}",
                    hint="a profile's lock files are named after it (requirements."
                    f"{name}.lock, ...); set [outputs] once, at the top level"
                    if key == "outputs"
                    else "profiles do not nest",
                )
        reader.unknown_keys(profile, allowed, f"profiles.{name}.")
        out[name] = profile
    return out


def merged_table(top: TomlTable, profile: TomlTable) -> TomlTable:
    """The top-level table with the profile's keys laid over it (pip and conda lists added)."""
    merged = {k: v for k, v in top.items() if k != "profiles"}
    for key, value in profile.items():
        base = merged.get(key)
        if key in ADDED_LISTS and isinstance(base, list) and isinstance(value, list):
            merged[key] = [*base, *value]
        else:
            merged[key] = value
    return merged


def profile_outputs(outputs: Outputs, profile: str) -> Outputs:
    """The project's lock file names with the profile's name in them: requirements.lock ->
    requirements.h100.lock, pylock.toml -> pylock.h100.toml."""
    named = {}
    for name in OUTPUT_NAMES:
        filename = name.filename(outputs)
        if filename is not None:
            named[name.field] = name.platform_file(filename, profile)
    return Outputs(**named)


def profile_intent(intent: Intent, profile: str, own: TomlTable, source: IntentSource) -> Intent:
    """The intent a profile locks: `intent` read from the merged table, its files and (unless the
    profile names one) its conda environment named after the profile."""
    env_name = intent.name if "name" in own else f"{intent.name}-{profile}"
    return replace(
        intent,
        name=env_name,
        outputs=profile_outputs(intent.outputs, profile),
        profile=profile,
        source=source,
    )
