"""Listing the files of a prefix: every file under site-packages and lib/ for the scan (in the
background, while RECORDs are read), and the whole tree (files and folders) for a transaction's
record of what existed before pip ran. The state folder (.lockguard) is never entered; symlinked
folders are listed as links, never followed."""

from __future__ import annotations

import os
import shutil
import tempfile

from lockguard.io.run import start_in_background
from lockguard.model.prefix import PrefixSnapshot

STATE_DIR = ".lockguard"


class FileListing:
    """Every file under site-packages and the prefix's lib/ (symlinked folders are not entered).

    GNU find lists a CUDA environment's hundreds of thousands of files far faster than a Python
    walk, and it runs in parallel with the RECORD parsing; where find is missing, a walk does it."""

    def __init__(self, root: str, site_dirs: list[str]) -> None:
        self.root = root
        tops = [t for t in dict.fromkeys([self.root + "/lib"] + site_dirs) if os.path.isdir(t)]
        self.tops = [t for t in tops if not any(t != o and t.startswith(o + os.sep) for o in tops)]
        self.process = None
        # Regular files other than shared libraries (nearly all) are written NUL-separated to find's
        # stdout, so that one split makes the list; the few links and libraries (with their size)
        # go to two more files find reaches through /dev/fd. Nothing to classify item by item, and
        # no thread draining a pipe: the three are unnamed temporary files, read once find is done.
        self._files = tempfile.TemporaryFile()  # noqa: SIM115 (closed by collect or close)
        self._links = tempfile.TemporaryFile()  # noqa: SIM115
        self._libraries = tempfile.TemporaryFile()  # noqa: SIM115
        if self.tops and shutil.which("find"):
            relative = [t[len(self.root) + 1 :] for t in self.tops]
            links, libraries = self._links.fileno(), self._libraries.fileno()
            self.process = start_in_background(
                [
                    "find",
                    *relative,
                    "-name",
                    STATE_DIR,
                    "-prune",
                    "-o",
                    "-type",
                    "l",
                    "-fprintf",
                    f"/dev/fd/{links}",
                    "%p\\0",
                    "-o",
                    "-type",
                    "f",
                    "-name",
                    "*.so*",
                    "-fprintf",
                    f"/dev/fd/{libraries}",
                    "%s %p\\0",
                    "-o",
                    "-type",
                    "f",
                    "-print0",
                ],
                cwd=self.root,
                stdout_file=self._files,
                pass_fds=(links, libraries),
                # byte-wise -name matching: a third faster than in a UTF-8 locale, and every
                # name with ".so" in it counts as a library, valid UTF-8 or not
                env={**os.environ, "LC_ALL": "C"},
            )
        self.sizes: dict[str, int] = {}  # shared libraries (*.so*) -> size: find stats them anyway
        self.libraries: list[str] | None = None  # the regular *.so* files, where find listed them

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The listed folders, relative to the root and ending in "/"."""
        return tuple(t[len(self.root) + 1 :] + "/" for t in self.tops)

    def collect(self, snap: PrefixSnapshot) -> None:
        try:
            if self._collect_found(snap):
                return
        finally:
            self.close()
        for top in self.tops:
            _walk(snap, top, top[len(self.root) + 1 :])

    def _collect_found(self, snap: PrefixSnapshot) -> bool:
        """What find printed, into the snapshot; False when there is nothing to use (then a
        walk)."""
        if self.process is None:
            return False
        self.process.wait(timeout=600)
        files = _items(_contents(self._files))
        libraries = _items(_contents(self._libraries))
        links = _items(_contents(self._links))
        if self.process.returncode != 0 and not (files or libraries or links):
            return False
        for item in libraries:
            size, _, path = item.partition(" ")
            self.sizes[path] = int(size)
        snap.files += files
        self.libraries = list(self.sizes)
        snap.files += self.libraries
        snap.symlinks = {path: os.path.realpath(os.path.join(self.root, path)) for path in links}
        snap.files += links
        return True

    def close(self) -> None:
        """Stop a find still running (a listing thrown away) and drop its output files."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._files.close()
        self._links.close()
        self._libraries.close()


def _contents(handle) -> bytes:
    handle.seek(0)
    return handle.read()


def _items(out: bytes) -> list[str]:
    """The NUL-terminated names find printed (the last one is cut short only if find was killed)."""
    items = out.decode("utf-8", "surrogateescape").split("\0")
    if items[-1] == "":
        items.pop()
    return items


def _walk(snap: PrefixSnapshot, folder: str, relative: str) -> None:
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            rel = f"{relative}/{entry.name}"
            if entry.is_symlink():
                snap.files.append(rel)
                snap.symlinks[rel] = os.path.realpath(entry.path)
            elif entry.is_dir():
                if entry.name != STATE_DIR:
                    _walk(snap, entry.path, rel)
            elif entry.is_file():
                snap.files.append(rel)


def list_tree(root: str) -> tuple[list[str], list[str]]:
    """(every non-folder entry, every folder) under root, relative, the state folder excluded."""
    files: list[str] = []
    dirs: list[str] = []
    stack = [("", root)]
    while stack:
        relative, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            rel = f"{relative}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if rel != STATE_DIR:
                    dirs.append(rel)
                    stack.append((rel + "/", entry.path))
            else:
                files.append(rel)
    return sorted(files), sorted(dirs)
