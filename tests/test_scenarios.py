"""The scenario tier: each tests/data/scenarios/*.toml is an intent, an index snapshot and the
outcome the resolver must reach (exact pins, or an exit code and what the explanation says),
driven through the pure core (resolve/orchestrate.py:resolve_lock) with the in-memory ports of
tests/fakes.py. No HTTP, no cache, no file but the scenario and lockguard's own knowledge: each
runs in milliseconds. The format is described in tests/data/scenarios/README.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lockguard.errors import LockguardError
from lockguard.io.knowledge.files import load_knowledge
from lockguard.knowledge.tables import Knowledge
from lockguard.model.intent_parse import parse_intent, parse_toml
from lockguard.model.lock import Lock
from lockguard.model.locked import LockedConda, LockedPlatform
from lockguard.model.names import canonical_name
from lockguard.model.upgrades import UpgradeRequest, parse_upgrade_package
from lockguard.resolve.orchestrate import ResolveOptions, resolve_lock
from lockguard.resolve.preferences import Preferences, preferences_for
from lockguard.resolve.relock_notes import RelockNotes
from tests.fakes import FakeConda, FakeIndex, conda_from, releases_from

SCENARIOS = sorted((Path(__file__).parent / "data" / "scenarios").glob("*.toml"))
TOP_KEYS = {
    "description",
    "moved-from",
    "intent",
    "upgrade",
    "upgrade-all",
    "pytorch-index-unreachable",
    "index",
    "pytorch-index",
    "channel",
    "previous",
    "expect",
}
EXPECT_KEYS = {
    "pins",
    "provided",
    "conda",
    "conda-specs",
    "exit",
    "error",
    "not-in-error",
    "warnings",
    "notes",
    "not-noted",
    "unread",
    "variant-pages",
}


@dataclass
class Outcome:
    lock: Lock | None = None
    error: LockguardError | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said (-v included) and the relock notes


def intent_text(value: str | Mapping[str, Any]) -> str:
    """The intent as lockguard.toml text: given as text, or as a table (written out as TOML;
    JSON's strings and arrays are TOML's)."""
    if isinstance(value, str):
        return value
    lines, tables = [], []
    for key, item in value.items():
        if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
            for row in item:  # [[dependency-metadata]]
                tables.append(f"[[{key}]]")
                tables += [f"{k} = {json.dumps(v)}" for k, v in row.items()]
        else:
            lines.append(f"{key} = {json.dumps(item)}")
    return "\n".join(lines + tables) + "\n"


def previous_lock(table: Mapping[str, Any], platform: str) -> LockedPlatform:
    conda = []
    for spec in table.get("conda", ()):
        name, version, build = spec.split("=")
        conda.append(LockedConda(name, version, build))
    return LockedPlatform(
        platform,
        pip={canonical_name(n): v for n, v in table.get("pins", {}).items()},
        via={canonical_name(n): tuple(v) for n, v in table.get("via", {}).items()},
        conda=tuple(conda),
    )


def run(scenario: Mapping[str, Any], knowledge: Knowledge) -> tuple[Outcome, FakeIndex]:
    intent = parse_intent(intent_text(scenario["intent"]), "lockguard.toml")
    index = FakeIndex(
        intent.indexes[0],
        releases_from(scenario.get("index", {})),
        pytorch_index=intent.pytorch_index,
        variants={
            label: releases_from(table)
            for label, table in scenario.get("pytorch-index", {}).items()
        },
        unreachable=scenario.get("pytorch-index-unreachable", False),
    )
    conda: FakeConda | None = None
    if "channel" in scenario:
        conda = conda_from(intent.channels[0], scenario["channel"])
    upgrade = UpgradeRequest(
        everything=scenario.get("upgrade-all", False),
        packages=tuple(parse_upgrade_package(p) for p in scenario.get("upgrade", ())),
    )
    previous = scenario.get("previous")
    outcome = Outcome()

    def locked(platform: str) -> LockedPlatform | None:
        return previous_lock(previous, platform) if previous is not None else None

    def preferences(platform: str) -> Preferences | None:
        # as app/resolution.py: no lock and no upgrade asked is a resolve from scratch
        if previous is None and not upgrade.packages:
            return None
        return preferences_for(locked(platform), upgrade)

    def relock(notes: RelockNotes) -> None:
        outcome.notes.extend(v.text() for v in notes.vanished)
        outcome.notes.extend(y.text() for y in notes.yanked)
        outcome.notes.extend(h.text() for h in notes.held_back)

    options = ResolveOptions(
        warn=outcome.warnings.append,
        note=outcome.notes.append,
        detail=outcome.notes.append,
        verbose=True,  # as -v: every passed-over version named
        preferences=preferences,
        locked=locked,
        on_notes=relock,
    )
    try:
        outcome.lock = resolve_lock(
            intent, knowledge, None, lambda _target, _torch: index, conda, options
        )
    except LockguardError as exc:
        outcome.error = exc
    return outcome, index


def explanation(error: LockguardError) -> str:
    return "\n".join([error.message, *error.details(), f"hint: {error.hint or ''}"])


def per_platform(expected: Mapping[str, Any], lock: Lock) -> dict[str, Mapping[str, Any]]:
    """`{name: version}` for a one-platform intent, `{platform: {name: version}}` for more."""
    platforms = [p.target.platform for p in lock.platforms]
    if all(isinstance(v, str) for v in expected.values()) and len(platforms) == 1:
        return {platforms[0]: expected}
    return dict(expected)


def check(scenario: Mapping[str, Any], outcome: Outcome, index: FakeIndex) -> None:
    expect = scenario["expect"]
    assert set(expect) <= EXPECT_KEYS, f"unknown expect keys: {set(expect) - EXPECT_KEYS}"
    if "exit" in expect:
        assert outcome.error is not None, f"resolved, expected exit {expect['exit']}"
        assert outcome.error.exit_code == expect["exit"], explanation(outcome.error)
        text = explanation(outcome.error)
        for fragment in expect.get("error", ()):
            assert fragment in text, f"{fragment!r} not in:\n{text}"
        for fragment in expect.get("not-in-error", ()):
            assert fragment not in text, f"{fragment!r} in:\n{text}"
    else:
        if outcome.error is not None:
            pytest.fail(f"exit {outcome.error.exit_code}:\n{explanation(outcome.error)}")
        assert outcome.lock is not None
        wanted = per_platform(expect["pins"], outcome.lock)
        assert [p.target.platform for p in outcome.lock.platforms] == list(wanted)
        for platform in outcome.lock.platforms:
            got = {pin.name: pin.version for pin in platform.pip.pins}
            assert got == wanted[platform.target.platform], platform.target.platform
        provided = {
            p.target.platform: dict(p.pip.conda_provided)
            for p in outcome.lock.platforms
            if p.pip.conda_provided
        }
        wanted = per_platform(expect.get("provided", {}), outcome.lock)
        assert provided == {platform: pins for platform, pins in wanted.items() if pins}
        conda_side = outcome.lock.platforms[0].conda
        if "conda" in expect:
            assert conda_side is not None and conda_side.solved
            assert {r.name: r.version for r in conda_side.records} == expect["conda"]
        if "conda-specs" in expect:
            assert conda_side is not None and not conda_side.solved
            assert list(conda_side.specs) == expect["conda-specs"]
    for fragment in expect.get("warnings", ()):
        assert any(fragment in w for w in outcome.warnings), (fragment, outcome.warnings)
    if "warnings" in expect and not expect["warnings"]:
        assert outcome.warnings == []
    for fragment in expect.get("notes", ()):
        assert any(fragment in n for n in outcome.notes), (fragment, outcome.notes)
    for fragment in expect.get("not-noted", ()):
        assert not any(fragment in n for n in outcome.notes), (fragment, outcome.notes)
    for filename in expect.get("unread", ()):
        assert filename not in index.read, f"the metadata of {filename} was read"
    if "variant-pages" in expect:
        assert sorted(set(index.variant_pages)) == sorted(expect["variant-pages"])


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    return load_knowledge()


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path: Path, knowledge: Knowledge) -> None:
    scenario = parse_toml(path.read_text())
    assert set(scenario) <= TOP_KEYS, f"unknown keys: {set(scenario) - TOP_KEYS}"
    assert "description" in scenario and "expect" in scenario
    outcome, index = run(scenario, knowledge)
    check(scenario, outcome, index)


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 25
