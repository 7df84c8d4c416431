"""sha256 for the check path, without loading OpenSSL.

`hashlib` imports its OpenSSL binding first (about a quarter of Python's start-up on the check
path); CPython's own sha256 module computes the same digests and loads at once. A build without
it falls back to hashlib.
"""

try:
    from _sha2 import sha256  # CPython 3.12+
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha256 import sha256  # CPython 3.10, 3.11
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()
