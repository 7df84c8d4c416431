"""The cache layer (lockguard/io/cache/): one root, entries validated on every read, atomic
writes, and an unusable cache folder that costs a warning, never a failure (issue 22, item 1)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lockguard.io.cache import root as cache_root_module
from lockguard.io.cache.root import cache_root
from lockguard.io.cache.store import Store
from tests.support import cache_entries

STORE = Store("test-kind", 1)


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    """Each test starts as a new run: no cache folder found unusable yet."""
    monkeypatch.setattr(cache_root_module, "_unusable", {})


@pytest.mark.parametrize("xdg", [None, "", "relative/cache", "/somewhere/cache"])
def test_the_root_is_platformdirs_user_cache_folder(monkeypatch, xdg):
    from platformdirs import user_cache_dir

    monkeypatch.delenv("LOCKGUARD_CACHE_DIR")
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache_root() == user_cache_dir("lockguard", appauthor=False)
    monkeypatch.setenv("LOCKGUARD_CACHE_DIR", "/elsewhere")
    assert cache_root() == "/elsewhere"


def test_an_entry_is_read_back_and_another_key_or_version_is_a_miss():
    assert STORE.put("key one", b"payload")
    assert STORE.get("key one") == b"payload"
    assert STORE.get("key two") is None
    assert Store("test-kind", 2).get("key one") is None
    assert Store("other-kind", 1).get("key one") is None


def _damaged(path: Path, how: str) -> None:
    data = path.read_bytes()
    path.unlink()
    if how == "truncated":
        path.write_bytes(data[: len(data) - 3])
    elif how == "garbled":
        path.write_bytes(data[:-4] + bytes(b ^ 0x5A for b in data[-4:]))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "extended":
        path.write_bytes(data + b"\n")
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
        (path / "inside").write_bytes(data)
    elif how == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    # a valid entry under another name is still another key's
    elif how == "symlink to a good entry":
        other = path.with_name("elsewhere")
        other.write_bytes(data)
        path.symlink_to(other)


DAMAGE = [
    "truncated",
    "garbled",
    "empty",
    "extended",
    "fifo",
    "folder",
    "symlink to /dev/zero",
    "symlink to a good entry",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_entry_is_a_miss_removed_and_never_waited_on(how, tmp_path):
    """In a child process with a timeout: a reader that blocks on a FIFO must fail, not hang."""
    root = tmp_path / "cache"
    store = Store("test-kind", 1, str(root))
    assert store.put("k", b"the payload" * 100)
    _damaged(Path(store.path_of("k")), how)
    # a regular file at least
    assert store.exists("k") == (how in ("truncated", "garbled", "empty", "extended"))
    code = textwrap.dedent(f"""
        from lockguard.io.cache.store import Store
        store = Store("test-kind", 1, {str(root)!r})
        print(store.get("k"))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr
    assert not os.path.lexists(store.path_of("k"))  # removed, whatever it was
    assert store.put("k", b"again") and store.get("k") == b"again"


def test_an_entry_copied_under_another_keys_name_is_a_miss():
    STORE.put("cuda.toml text", b"the parse of cuda.toml")
    STORE.put("torch.toml text", b"the parse of torch.toml")
    first, second = Path(STORE.path_of("cuda.toml text")), Path(STORE.path_of("torch.toml text"))
    data = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(data)
    assert STORE.get("cuda.toml text") is None and STORE.get("torch.toml text") is None


def test_a_write_is_a_fsynced_temporary_file_renamed_in_its_folder_then_the_folder_fsynced(
    monkeypatch,
):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    assert STORE.put("k", b"x")
    target = STORE.path_of("k")
    folder = os.path.dirname(target)
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"]
    tmp = calls[0][1]
    assert (
        os.path.dirname(tmp) == folder
        and calls[1] == ("replace", tmp, target)
        and calls[2] == ("fsync", folder)
    )
    assert sorted(os.listdir(folder)) == [os.path.basename(target)]  # no temporary file left


@pytest.mark.parametrize("kind", ["a file", "/dev/null"])
def test_an_unusable_cache_folder_is_one_warning_and_no_failure(
    kind, tmp_path, monkeypatch, capsys
):
    if kind == "a file":
        (tmp_path / "file").write_text("")
        monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(tmp_path / "file"))
    else:
        monkeypatch.setenv("LOCKGUARD_CACHE_DIR", "/dev/null")
    for number in range(3):
        assert STORE.put(f"k{number}", b"x") is False
        assert STORE.get(f"k{number}") is None
    err = capsys.readouterr().err
    assert err.count("warning: the cache folder") == 1 and "runs without its cache" in err
    # rattler gets a temporary folder instead
    assert os.path.isdir(cache_root_module.tools_folder())


def test_a_full_cache_folder_is_one_warning_and_no_failure(tmp_path, monkeypatch, capsys):
    full = tmp_path / "full"
    full.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)], capture_output=True
    ).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        monkeypatch.setenv("LOCKGUARD_CACHE_DIR", str(full))
        assert STORE.put("k", b"x" * 20000) is False and STORE.put("j", b"y" * 20000) is False
        assert capsys.readouterr().err.count("No space left on device") == 1
        assert cache_entries.entries(root=full) == [] and not [p for p in full.rglob("*.tmp")]
    finally:
        subprocess.run(["umount", str(full)], check=False)


def test_prune_keeps_the_newest(tmp_path):
    store = Store("written-test", 1, str(tmp_path))
    for number in range(5):
        store.put(f"k{number}", b"x")
        os.utime(store.path_of(f"k{number}"), ns=(number * 10**9, number * 10**9))
    store.prune(2)
    assert [store.get(f"k{n}") for n in range(5)] == [None, None, None, b"x", b"x"]


def test_a_revalidated_page_is_kept_with_its_new_fetch_time_and_digest():
    """A 304 renews the page's age (its TTL starts again) and keeps its body; the page value the
    client holds is not changed (CachedPage is frozen)."""
    from lockguard.io.index.cache import Cache, CachedPage

    cache = Cache()
    page = CachedPage(
        "https://index.test/simple/x/", "text/html", b"<a>x</a>", '"etag"', None, 1000.0
    )
    assert page.body_sha256 == hashlib.sha256(b"<a>x</a>").hexdigest()  # made from the body
    cache.put_page(page)
    assert cache.page_state(page.url) == (page.body_sha256, 1000.0)
    cache.touch_page(page)
    digest, fetched_at = cache.page_state(page.url)
    assert digest == page.body_sha256 and fetched_at > 1000.0
    assert page.fetched_at == 1000.0
    assert cache.get_page(page.url).body == b"<a>x</a>"
