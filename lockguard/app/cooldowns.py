"""A cooldown's cut-off for one resolve: the one the lock recorded, while the intent's span is the
span recorded with it, else now minus the span.

uv decides the same way (astral-sh/uv#16814: a relative exclude-newer is resolved into a timestamp
for the lockfile, "if the span has not changed ... locking again will not change the lockfile. The
locked timestamp will only be updated when the lockfile is invalidated, e.g., with --upgrade"). So:
- `resolve` and `resolve --check` keep the recorded cut-off: days passing never make `--check` red
  and never move a lock by themselves;
- `resolve --upgrade` (and `outdated`, which asks what it would write) takes now minus the span;
- a span changed in the intent (or a lock without the record, or a record that cannot be read)
  takes now minus the new span.
`--upgrade-package NAME` keeps the recorded cut-off: it frees a version, not the cooldown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone

from lockguard.io.project.prior_lock import LockTexts
from lockguard.io.project.written import written_copy
from lockguard.lockfiles.headers import is_sealed_intact, read_header
from lockguard.model.cooldown import (
    FIELD,
    PACKAGE_FIELD,
    SPAN_FIELD,
    Cutoff,
    cutoff_of,
    read_package_record,
    read_stamp,
    span_words,
    stamp,
)
from lockguard.model.intent import Intent

GLOBAL = ""  # the key of exclude-newer's own record among the packages' records


def clock() -> datetime:
    """Now, in UTC (the tests move it to show days passing)."""
    return datetime.now(timezone.utc)


def recorded(texts: LockTexts) -> dict[str, Cutoff]:
    """The cut-offs the lock files record ("" for exclude-newer, else a package's canonical name):
    from the first lock file (by path) that records any, as lockguard wrote it (a file edited by
    hand counts by lockguard's copy of it, or not at all)."""
    for relative in sorted(texts.kinds):
        text = texts.by_path.get(relative)
        if text is not None and not is_sealed_intact(text):
            body = read_header(text).body_hash
            text = written_copy(body) if body else None
        if text is None:
            continue
        fields = read_header(text).fields
        out = read_package_record(fields.get(PACKAGE_FIELD, ""))
        when = read_stamp(fields.get(FIELD, ""))
        if when is not None and fields.get(SPAN_FIELD):
            out[GLOBAL] = Cutoff(when, fields[SPAN_FIELD])
        if out:
            return out
    return {}


def settle(
    intent: Intent,
    texts: LockTexts,
    *,
    renew: bool,
    now: datetime | None = None,
    say: Callable[[str], None] = lambda _m: None,
) -> Intent:
    """The intent with each cooldown's cut-off settled for this resolve (the module says how);
    an intent without a cooldown is returned as it is. `renew`: --upgrade; `say` hears, per
    cooldown, which cut-off was taken and why (-v)."""
    if not intent.has_cooldown:
        return intent
    moment = now or clock()
    found = {} if renew else recorded(texts)

    def cut(key: str, span: str) -> datetime:
        kept = found.get(key)
        what = f"exclude-newer-package {key}" if key else "exclude-newer"
        if kept is not None and kept.span == span and kept.at is not None and kept.at <= moment:
            say(
                f"{what}: a {span_words(span)} cooldown, cut-off {stamp(kept.at)} as the lock "
                "records it (`lockguard resolve --upgrade` takes a fresh one)"
            )
            return kept.at
        fresh = cutoff_of(span, moment)
        why = "--upgrade" if renew else "no cut-off of this span is recorded in the lock"
        say(f"{what}: a {span_words(span)} cooldown, cut-off {stamp(fresh)} ({why})")
        return fresh

    span = intent.exclude_newer_span
    return replace(
        intent,
        exclude_newer=cut(GLOBAL, span) if span is not None else intent.exclude_newer,
        exclude_newer_package=tuple(
            (name, Cutoff(cut(name, c.span), c.span) if c.span is not None else c)
            for name, c in intent.exclude_newer_package
        ),
    )
