"""The first tier of `lockguard check` (issue 34 §3): a lock set that certifies itself. Each file
read, hashed and compared: lockguard's header, this lockguard's version, the intent's hash, its
body hash intact, its pins digest recorded, the knowledge fingerprint of today's constraints, and
the digest of the whole set that resolve wrote when check's rules found nothing in it
(lockfiles/headers.py). When every file's proof holds, the rules (YAML, packaging, the rule
modules) would find what they found when resolve wrote the set: nothing. Pure."""

from __future__ import annotations

from lockguard.lockfiles.headers import body_hash_of, lock_set_digest, read_header


def proven(files: dict[str, str | None], *, intent_hash: str, knowledge: str, version: str) -> bool:
    """`files`: every lock file of the intent (relative path -> text, None: missing). Whether
    they prove themselves; False sends the check to its full rules."""
    if not files:
        return False
    digests = set()
    for text in files.values():
        if text is None:
            return False
        header = read_header(text)
        if (
            header.version != version
            or header.intent_hash != intent_hash
            or header.knowledge != knowledge
            or header.pins_hash is None
            or header.lock_set is None
            or header.body_hash != body_hash_of(text)
        ):
            return False
        digests.add(header.lock_set)
    present = {relative: text for relative, text in files.items() if text is not None}
    return len(digests) == 1 and digests == {lock_set_digest(present)}
