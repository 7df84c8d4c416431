"""The shape of JSON data as lockguard passes it around (a doctor record, a fleet report, a probe's
facts): objects with string keys and values of any JSON type, checked where they are read."""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
