"""lockguard's one cache layer: everything lockguard keeps between runs on this machine.

One root (root.py): `LOCKGUARD_CACHE_DIR`, else platformdirs' user cache folder for "lockguard".
One kind of entry (entry.py): a header with the kind, its schema version, the digest of the full
key and the payload's length and CRC-32, then the payload. One store (store.py) that writes entries
atomically (a temporary file in the same folder, fsync, rename, fsync of the folder) and validates
every read: an entry that is absent, truncated, garbled, of another version or key (a file copied or
renamed under another name), or that is not a regular file (a FIFO, a folder, a symlink) is a miss,
removed when possible, never trusted and never waited on. An unusable cache folder (a file,
/dev/null, read-only, full) costs one warning on stderr and the cache for the rest of the run, never
the command.

Using it (a new memo is a Store of its own kind; nothing else writes into the cache folder)::

    from lockguard.io.cache.store import Store

    FAILED_BUILDS = Store("failed-build", version=1)   # kind: [a-z0-9-]+, bump version on any
                                                         change of shape

    data = FAILED_BUILDS.get(key)      # bytes, or None for any kind of miss
    FAILED_BUILDS.put(key, payload)    # bytes; never raises (an unusable cache warns once)
    FAILED_BUILDS.discard(key)         # forget one entry

`key` is text holding *everything the value depends on* (for a parsed index page: the page URL and
the body's sha256, since its rows hold URLs made absolute against that URL); the file name is its
sha256 (or, for a kind whose payload holds its key and compares it, checksums of it: `names=` in
store.py). Payloads are bytes: encode with marshal (plain data) or msgspec and check the decoded
shape again, as the callers here do. Standard library only, no pathlib: the cached `lockguard
check` reads through this package before anything else is imported.

The entries of lockguard today: index pages, their bodies, parsed rows and file METADATA
(io/index/cache.py), whole resolutions (io/index/resolve_memo.py), check results
(io/project/check_cache.py), the parse of constraints/*.toml (io/knowledge/cache.py), copies of
written locks (io/project/written.py), the environment scan's parses (io/env/scan_memo.py). rattler
keeps its own caches (repodata, packages) in `tools_folder()` (root.py).
"""
