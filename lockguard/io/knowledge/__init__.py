"""The knowledge (constraints/*.toml) as lockguard reads it from disk: the files (files.py) and
their parse, kept in the cache folder under their contents and lockguard's code (cache.py), and
their fingerprint, which lock files record (fingerprint.py)."""
