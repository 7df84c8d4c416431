"""Listing the files of a prefix: every file under site-packages and lib/ for the scan (in the
background, while RECORDs are read), and the whole tree (files and folders) for a transaction's
record of what existed before pip ran. The state folder (.lockguard) is never entered; symlinked
folders are listed as links, never followed."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

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
        if self.tops and shutil.which("find"):
            relative = [t[len(self.root) + 1:] for t in self.tops]
            try:
                self.process = subprocess.Popen(
                    ["find", *relative, "-name", STATE_DIR, "-prune", "-o", "-type", "l", "-printf", "L%p\\0",
                     "-o", "-type", "f", "-name", "*.so*", "-printf", "S%s %p\\0", "-o", "-type", "f", "-printf", "F%p\\0"],
                    cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            except OSError:
                self.process = None
        self._chunks: list[bytes] = []
        self.sizes: dict[str, int] = {}  # shared libraries (*.so*) -> size: find stats them anyway
        if self.process is not None:
            # drain the pipe meanwhile: a full pipe would stop find until collect()
            self._reader = threading.Thread(target=self._drain, daemon=True)
            self._reader.start()

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The listed folders, relative to the root and ending in "/"."""
        return tuple(t[len(self.root) + 1:] + "/" for t in self.tops)

    def _drain(self) -> None:
        for chunk in iter(lambda: self.process.stdout.read(1 << 20), b""):
            self._chunks.append(chunk)

    def collect(self, snap: PrefixSnapshot) -> None:
        if self.process is not None:
            self._reader.join(timeout=600)
            self.process.wait(timeout=600)
            out = b"".join(self._chunks)
            if self.process.returncode == 0 or out:
                links = []
                for item in out.decode("utf-8", "surrogateescape").split("\0"):
                    if not item:
                        continue
                    if item[0] == "S":
                        size, _, item = item.partition(" ")
                        self.sizes[item] = int(size[1:])
                        snap.files.append(item)
                    else:
                        (links if item[0] == "L" else snap.files).append(item[1:])
                snap.symlinks = {path: os.path.realpath(os.path.join(self.root, path)) for path in links}
                snap.files += links
                return
        for top in self.tops:
            _walk(snap, top, top[len(self.root) + 1:])


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

