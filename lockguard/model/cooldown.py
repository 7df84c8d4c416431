"""Cooldowns: `exclude-newer = "7 days"` (a span, not a date) and `exclude-newer-package`.

The spans accepted are uv's: a "friendly" duration ("24 hours", "1 week", "30 days", "7d") or an
ISO 8601 duration ("PT24H", "P7D", "P2W"); a day is 24 hours and calendar units (months, years)
are refused, since their length depends on the date. uv's own words:
https://docs.rs/uv-cli/latest/uv_cli/struct.ExcludeNewerArgs.html ("Accepts RFC 3339 timestamps
..., a 'friendly' duration (e.g., 24 hours, 1 week, 30 days), or an ISO 8601 duration (e.g.,
PT24H, P7D, P30D) ... Calendar units such as months and years are not allowed").

A span becomes an absolute cut-off when a resolve runs (now minus the span), and the lock files
record both (header fields below). As uv does (astral-sh/uv#16814: "If the span has not changed
... locking again will not change the lockfile. The locked timestamp will only be updated when
the lockfile is invalidated, e.g., with --upgrade"), a later resolve reuses the recorded cut-off
while the span in the intent is the one recorded, so `resolve --check` never turns red because
days passed; `resolve --upgrade` takes a fresh one (app/cooldowns.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

# the header fields of a lock file that record what a relative cut-off was resolved to
FIELD = "exclude-newer"
SPAN_FIELD = "exclude-newer-span"
PACKAGE_FIELD = "exclude-newer-package"

_UNITS = {
    "w": 604800,
    "wk": 604800,
    "wks": 604800,
    "week": 604800,
    "weeks": 604800,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
}
_CALENDAR = {"y", "yr", "yrs", "year", "years", "mo", "mos", "month", "months"}
_FRIENDLY_PART = re.compile(r"\s*(\d{1,6})\s*([a-z]+)\s*,?", re.ASCII)
_ISO = re.compile(
    r"P(?:(?P<w>\d{1,6})W)?(?:(?P<d>\d{1,6})D)?"
    r"(?:T(?:(?P<h>\d{1,6})H)?(?:(?P<m>\d{1,6})M)?(?:(?P<s>\d{1,6})S)?)?",
    re.ASCII,
)
_LONGEST = timedelta(days=365 * 50)  # a cooldown longer than PyPI has served wheels is a typo


class SpanError(ValueError):
    """Why a text is not a span (the message completes "... is not a span: ")."""


def looks_like_span(text: str) -> bool:
    """A date or date-time starts with four digits and a dash; a span never does."""
    return not re.match(r"\d{4}-", text.strip(), re.ASCII)


def parse_span(text: str) -> timedelta:
    """The length of a uv span ("7 days", "1 week", "P7D", "PT24H"); SpanError otherwise."""
    value = text.strip()
    if not value:
        raise SpanError("it is empty")
    upper = value.upper()
    if upper.startswith("P"):
        if any(unit in upper[1:].split("T")[0] for unit in "YM"):
            raise SpanError("calendar units (years, months) have no fixed length")
        match = _ISO.fullmatch(upper)
        if not match or upper in ("P", "PT") or upper.endswith("T"):
            raise SpanError("not an ISO 8601 duration of weeks, days, hours, minutes, seconds")
        seconds = sum(int(match.group(k) or 0) * _UNITS[k] for k in ("w", "d", "h", "m", "s"))
        return _bounded(timedelta(seconds=seconds))
    lowered = value.lower()
    if lowered.endswith(" ago") or lowered.startswith(("-", "+")):
        raise SpanError("a cooldown is a length of time, without a sign or 'ago'")
    seconds, position = 0, 0
    while position < len(lowered):
        part = _FRIENDLY_PART.match(lowered, position)
        if not part:
            raise SpanError('write a number and a unit, e.g. "7 days", "1 week", "24 hours"')
        unit = part.group(2)
        if unit in _CALENDAR:
            raise SpanError("calendar units (years, months) have no fixed length")
        if unit not in _UNITS:
            raise SpanError(f"{unit!r} is not a unit (weeks, days, hours, minutes, seconds)")
        seconds += int(part.group(1)) * _UNITS[unit]
        position = part.end()
    return _bounded(timedelta(seconds=seconds))


def _bounded(span: timedelta) -> timedelta:
    if span > _LONGEST:
        raise SpanError("it is longer than any package index has existed")
    return span


def span_text(span: timedelta) -> str:
    """The canonical ISO 8601 form: "7 days" and "1 week" are both "P7D"; a day is 24 hours."""
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = "".join(f"{n}{u}" for n, u in ((hours, "H"), (minutes, "M"), (secs, "S")) if n)
    text = "P" + (f"{days}D" if days else "") + (f"T{clock}" if clock else "")
    return text if text != "P" else "PT0S"


def span_words(canonical: str) -> str:
    """ "P7D" -> "7 days", "P1DT12H" -> "1 day 12 hours" (for messages)."""
    span = parse_span(canonical)
    seconds = int(span.total_seconds())
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {unit}{'s' if count != 1 else ''}")
    return " ".join(parts) or "0 seconds"


def cutoff_of(span: str, now: datetime) -> datetime:
    """The absolute cut-off of a canonical span at `now`, to the second (as recorded)."""
    return (now - parse_span(span)).astimezone(timezone.utc).replace(microsecond=0)


def stamp(when: datetime) -> str:
    """A cut-off as the lock records it: RFC 3339 in UTC, to the second."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_stamp(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(timezone.utc) if when.tzinfo is not None else None


@dataclass(frozen=True, slots=True)
class Cutoff:
    """One package's exclude-newer: `at` (None: no cut-off, `exclude-newer-package NAME =
    false`) and, for a cooldown, the canonical span it was computed from."""

    at: datetime | None
    span: str | None = None

    def text(self) -> str:
        """ "2026-11-25" or "2026-11-25T13:48:00Z (a 7 days cooldown)", for messages."""
        if self.at is None:
            return "none"
        if self.span is None:
            return self.at.date().isoformat()
        return f"{stamp(self.at)} (a {span_words(self.span)} cooldown)"

    def record(self) -> str:
        """The form the lock's exclude-newer-package field holds."""
        if self.at is None:
            return "false"
        return stamp(self.at) + (f"/{self.span}" if self.span else "")

    def canonical(self) -> str | bool:
        """What the intent hash holds: the span (stable as days pass), else the time."""
        if self.at is None:
            return False
        return self.span or self.at.isoformat()


def read_package_record(text: str) -> dict[str, Cutoff]:
    """The exclude-newer-package field ("torch=false, vllm=2026-11-25T13:48:00Z/P7D") read back;
    entries that do not parse are left out (the cut-off is then taken afresh)."""
    out = {}
    for item in text.split(","):
        name, _, value = item.strip().partition("=")
        if not name or not value:
            continue
        if value == "false":
            out[name] = Cutoff(None)
            continue
        when_text, _, span = value.partition("/")
        when = read_stamp(when_text)
        if when is not None:
            out[name] = Cutoff(when, span or None)
    return out
