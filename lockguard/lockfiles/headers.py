"""The lockguard header every lock file carries: version, intent hash and body hash.

The body hash is the sha256 of the file with the body-hash value blanked, so a drift check needs
no solve and no network to tell that a file was edited by hand.

A file's proof (issue 34 §3): resolve adds the fingerprint of the knowledge its rules read
(`lockguard-knowledge`) and, when the rules `lockguard check` runs found nothing in the files it
wrote, the digest of the whole lock set (`lockguard-lock-set`: every file of the set, each with
its body hash and this line blanked). `lockguard check` then reads, hashes and compares (check/
proof.py) instead of running the rules; a file written before these lines existed, or whose proof
does not hold, takes the full rules.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from lockguard import __version__

PLACEHOLDER = "0" * 64
# a lock file's pins as its format's reader finds them (pins.py): key (the name, or the manager,
# name and platform) -> (the pinned version, its hashes as the format lists them, its line)
PinEntries: TypeAlias = dict[str, tuple[str, tuple[object, ...], int | None]]
# linear-time patterns (no nested or adjacent unbounded repeats over the same characters): a header
# line padded with 200,000 spaces must cost microseconds, not seconds
_FIELD = re.compile(r"^#[ \t]*lockguard-(?P<key>[a-z-]+):(?P<value>[^\n]*)$", re.M)
_PINS = re.compile(r"^(#[ \t]*lockguard-pins:[ \t]*sha256:)([0-9a-f]{64})[ \t\r]*$", re.M)
_BODY = re.compile(r"^(#[ \t]*lockguard-body-hash:[ \t]*sha256:)([0-9a-f]{64})[ \t\r]*$", re.M)
_LOCK_SET = re.compile(r"^(#[ \t]*lockguard-lock-set:[ \t]*sha256:)([0-9a-f]{64})[ \t\r]*$", re.M)
_PINS_LINE = re.compile(r"^(#[ \t]*)lockguard-pins:", re.M)
# the proof's lines: a file that differs from another only in them holds the same lock
_PROOF_LINE = re.compile(r"^#[ \t]*lockguard-(?:knowledge|lock-set):[^\n]*\n", re.M)
KNOWLEDGE_KEY = "knowledge"
LOCK_SET_KEY = "lock-set"


@dataclass(frozen=True, slots=True)
class Header:
    version: str | None
    intent_hash: str | None
    body_hash: str | None
    fields: Mapping[str, str]

    @property
    def pins_hash(self) -> str | None:
        """The digest of the pins lockguard wrote (None in files written before it was recorded)."""
        value = self.fields.get("pins")
        return value.split(":", 1)[1] if value and value.startswith("sha256:") else None

    @property
    def knowledge(self) -> str | None:
        """The fingerprint of the knowledge resolve's rules read (None: written before it was
        recorded)."""
        value = self.fields.get(KNOWLEDGE_KEY)
        return value.split(":", 1)[1] if value and value.startswith("sha256:") else None

    @property
    def lock_set(self) -> str | None:
        """The digest of the lock set this file was written with (None: not certified)."""
        value = self.fields.get(LOCK_SET_KEY)
        return value.split(":", 1)[1] if value and value.startswith("sha256:") else None

    @property
    def conda_solved(self) -> bool:
        return self.fields.get("conda-side", "solved") == "solved"


def header_lines(
    intent_hash: str,
    extra: dict[str, str] | None = None,
    repeated: tuple[tuple[str, str], ...] = (),
) -> list[str]:
    """`repeated`: (key, value) lines a key may have several of (`held-back`)."""
    lines = [
        f"# lockguard-version: {__version__}",
        f"# lockguard-intent-hash: sha256:{intent_hash}",
    ]
    lines += [f"# lockguard-{key}: {value}" for key, value in (extra or {}).items()]
    lines += [f"# lockguard-{key}: {value}" for key, value in repeated]
    lines.append(f"# lockguard-pins: sha256:{PLACEHOLDER}")
    lines.append(f"# lockguard-body-hash: sha256:{PLACEHOLDER}")
    return lines


def pins_digest_of(entries: PinEntries) -> str:
    """sha256 over the sorted `name==version` pins of a lock's entries (name -> (version, ...));
    hashes and lines are left out."""
    pins = sorted(f"{name}=={entry[0]}" for name, entry in entries.items())
    return hashlib.sha256("\n".join(pins).encode()).hexdigest()


def seal(text: str, entries: PinEntries | None = None) -> str:
    """Fill in the pins digest of `entries` (the pins the rendered file holds, as its own reader
    finds them) and then the body hash of a rendered file (their header lines hold the
    placeholder)."""
    if entries is not None:
        pins = pins_digest_of(entries)
        text, count = _PINS.subn(lambda m: m.group(1) + pins, text, count=1)
        if count != 1:
            raise ValueError("the rendered file has no pins line")
    digest = hashlib.sha256(text.encode()).hexdigest()
    sealed, count = _BODY.subn(lambda m: m.group(1) + digest, text, count=1)
    if count != 1:
        raise ValueError("the rendered file has no body-hash line")
    return sealed


def body_hash_of(text: str) -> str:
    """What the body hash of `text` should be."""
    return hashlib.sha256(
        _BODY.sub(lambda m: m.group(1) + PLACEHOLDER, text, count=1).encode()
    ).hexdigest()


def read_header(text: str) -> Header:
    fields = {}
    for match in _FIELD.finditer(text):
        value = match.group("value").strip()
        if value and match.group("key") not in fields:
            fields[match.group("key")] = value

    def sha(key: str) -> str | None:
        value = fields.get(key)
        return value.split(":", 1)[1] if value and value.startswith("sha256:") else None

    return Header(fields.get("version"), sha("intent-hash"), sha("body-hash"), fields)


def values_of(text: str, key: str) -> list[str]:
    """Every value of a header key that may repeat (`lockguard-held-back`), in order."""
    return [
        match.group("value").strip()
        for match in _FIELD.finditer(text)
        if match.group("key") == key and match.group("value").strip()
    ]


def is_sealed_intact(text: str) -> bool:
    header = read_header(text)
    return header.body_hash is not None and header.body_hash == body_hash_of(text)


def _blank(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: m.group(1) + PLACEHOLDER, text, count=1)


def lock_set_digest(texts: dict[str, str]) -> str:
    """sha256 over every file of a lock set (relative path -> text), each with its body hash and
    its lock-set digest blanked: a file of another resolve, edited, added or gone changes it."""
    digest = hashlib.sha256()
    for relative in sorted(texts):
        text = _blank(_LOCK_SET, _blank(_BODY, texts[relative]))
        digest.update(relative.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest())
    return digest.hexdigest()


def certify(texts: dict[str, str], knowledge: str, *, clean: bool) -> dict[str, str]:
    """The sealed files of one lock set (relative path -> text) with the knowledge fingerprint
    and, when `clean` (check's rules found nothing in them), the lock set's digest, each inserted
    before its pins line and the body hash sealed again."""
    lines = [f"lockguard-{KNOWLEDGE_KEY}: sha256:{knowledge}"]
    if clean:
        lines.append(f"lockguard-{LOCK_SET_KEY}: sha256:{PLACEHOLDER}")
    stamped = {}
    for relative, text in texts.items():
        text, count = _PINS_LINE.subn(
            lambda m: "".join(f"{m.group(1)}{line}\n" for line in lines) + m.group(0),
            text,
            count=1,
        )
        if count != 1:
            raise ValueError(f"{relative} has no pins line")
        stamped[relative] = text
    if clean:
        digest = lock_set_digest(stamped)
        stamped = {
            relative: _LOCK_SET.sub(lambda m: m.group(1) + digest, text, count=1)
            for relative, text in stamped.items()
        }
    return {relative: seal(_blank(_BODY, text)) for relative, text in stamped.items()}


def without_proof(text: str) -> str:
    """The file as a lockguard that wrote no proof lines would have sealed it: what `resolve
    --check` compares, so that a file's proof (absent in a file written before it existed, or of
    other knowledge) never alone makes a lock stale."""
    return _blank(_BODY, _PROOF_LINE.sub("", text))
