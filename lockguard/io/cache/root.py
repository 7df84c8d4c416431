"""Where lockguard's cache lives, and whether this run can use it.

The root is `LOCKGUARD_CACHE_DIR` when set, else platformdirs' user cache folder for "lockguard"
(on Linux the XDG rule: `$XDG_CACHE_HOME/lockguard` when it is an absolute path, else
`~/.cache/lockguard`). On Linux the rule is applied here without importing platformdirs, whose
import (pathlib and more) would cost the cached `lockguard check` a tenth of its time;
tests/test_cache_layer.py holds the two answers equal.

A cache folder that cannot be written (a file, /dev/null, a read-only or full file system) is
reported once per run and the run goes on without writing to it; reads still answer misses.
"""

from __future__ import annotations

import os
import pwd
import sys

ENV_CACHE_DIR = "LOCKGUARD_CACHE_DIR"
APP = "lockguard"
ENTRIES = "entries"  # store.py's entries: <root>/entries/<kind>/<2 hex>/<sha256 of the key>
TOOLS = "v1"  # rattler's own caches, where earlier lockguards kept them (repodata, packages)

_unusable: dict[str, str] = {}  # root -> why it cannot be written (reported once)
_fallbacks: dict[str, str] = {}  # unusable root -> the temporary tools folder standing in for it


def cache_root() -> str:
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return configured
    if sys.platform.startswith("linux"):
        return os.path.join(_xdg_cache_home(), APP)
    from platformdirs import user_cache_dir  # off Linux only: not on the cached check's path

    return user_cache_dir(APP, appauthor=False)


def _xdg_cache_home() -> str:
    configured = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(configured):
        return configured
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):  # as platformdirs: a relative HOME counts as unset
        home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, ".cache")


def entries_folder(root: str | None = None) -> str:
    return os.path.join(root or cache_root(), ENTRIES)


def writable(root: str) -> bool:
    """False once a write under `root` failed in a way that says the folder itself is unusable."""
    return root not in _unusable


def give_up(root: str, error: OSError) -> None:
    """Stop writing under `root` for the rest of this run, and say so once."""
    if root in _unusable:
        return
    why = error.strerror or type(error).__name__
    _unusable[root] = why
    warn(
        f"the cache folder {root} cannot be used ({why}): lockguard runs without its cache "
        f"(set {ENV_CACHE_DIR} to a writable folder to keep one)"
    )


def warn(message: str) -> None:
    """The cache's only message; the CLI's `warning:` format, without importing the Ui."""
    print(f"warning: {message}", file=sys.stderr)


def tools_folder() -> str:
    """The folder of the cache where tools that keep their own files (rattler's repodata and
    packages) make theirs, created; a temporary folder of this run when the cache cannot be used."""
    root = cache_root()
    folder = os.path.join(root, TOOLS)
    if writable(root):
        try:
            os.makedirs(folder, exist_ok=True)
            return folder
        except OSError as exc:
            give_up(root, exc)
    if root not in _fallbacks:
        # a cache that cannot be written, rare: shutil and tempfile stay off the cached check's path
        import atexit
        import shutil
        import tempfile

        _fallbacks[root] = tempfile.mkdtemp(prefix="lockguard-cache-")
        atexit.register(shutil.rmtree, _fallbacks[root], True)
    return _fallbacks[root]
