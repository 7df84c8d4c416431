"""The one encoding of a cache entry: a header that says what the entry is, then the payload.

    MAGIC (5 bytes: b"LGCE" and the encoding's own version)
    the kind's schema version (4 bytes, big-endian)
    the sha256 of (kind, schema version, key) (32 bytes)
    the payload's length (8 bytes, big-endian)
    the CRC-32 of the four fields above and of the payload (4 bytes, big-endian)
    the payload

An entry is used only when every field is what the reader expects: the magic, its kind's version,
the digest of the very key it asked for (an entry copied, renamed or swapped under another key's
name is a miss), the length (a truncated or extended file is a miss) and the CRC (a garbled one is
a miss). Pure functions over bytes; store.py does the file system.

A kind names its entries by the sha256 of the key (`key_digest`), or, when its payload holds the
whole key and its reader compares it (the check results: their path runs before anything else is
imported, and hashlib's import is a sixth of it), by two checksums of the key
(`checksum_digest`): a collision there is a miss, never another key's answer.
"""

from __future__ import annotations

import zlib

MAGIC = b"LGCE\x01"
HEADER_SIZE = len(MAGIC) + 4 + 32 + 8 + 4


def key_digest(kind: str, version: int, key: str) -> bytes:
    """What names an entry: its kind, the kind's schema version and the full key."""
    import hashlib  # here, not above: the check results' path names its entries without it

    return hashlib.sha256(_named(kind, version, key)).digest()


def checksum_digest(kind: str, version: int, key: str) -> bytes:
    """A name for an entry whose payload holds the full key, compared when read: CRC-32, Adler-32
    and the length of (kind, version, key), in the 32 bytes a sha256 takes."""
    data = _named(kind, version, key)
    fields = zlib.crc32(data), zlib.adler32(data), len(data)
    return b"".join(n.to_bytes(8, "big") for n in fields).ljust(32, b"\0")


def _named(kind: str, version: int, key: str) -> bytes:
    return f"{kind}\0{version}\0{key}".encode("utf-8", "surrogatepass")


def header(version: int, digest: bytes, payload: bytes) -> bytes:
    """The header to write before `payload` (written apart: a page body is not copied again)."""
    fields = MAGIC + version.to_bytes(4, "big") + digest + len(payload).to_bytes(8, "big")
    return fields + zlib.crc32(payload, zlib.crc32(fields[len(MAGIC) :])).to_bytes(4, "big")


def payload_of(data: bytes, version: int, digest: bytes) -> bytes | None:
    """The payload of an entry read whole, or None when any field is not what is expected."""
    if len(data) < HEADER_SIZE or not data.startswith(MAGIC):
        return None
    at = len(MAGIC)
    if int.from_bytes(data[at : at + 4], "big") != version or data[at + 4 : at + 36] != digest:
        return None
    if int.from_bytes(data[at + 36 : at + 44], "big") != len(data) - HEADER_SIZE:
        return None
    payload = data[HEADER_SIZE:]
    crc = zlib.crc32(payload, zlib.crc32(data[at : at + 44]))
    return payload if crc == int.from_bytes(data[at + 44 : HEADER_SIZE], "big") else None
