"""A wheel's METADATA read over HTTP range requests (io/index/lazy_wheel.py) by `zipfile`: a
directory larger than the first tail read, a prefix before the archive, two METADATA, a damaged
member and an oversized one. Wheels are real zip files served by a local index."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from lockguard.errors import SourceUnreachable
from lockguard.io.index.http import HttpClient
from lockguard.io.index.lazy_wheel import read_wheel_metadata
from tests.support.index_server import LocalIndex

METADATA = b"Metadata-Version: 2.1\nName: many\nVersion: 1.0\nRequires-Dist: hjson\n" * 20


def _wheel(
    folder: Path,
    name: str = "many-1.0-py3-none-any.whl",
    *,
    files: int = 3000,
    compression: int = zipfile.ZIP_DEFLATED,
    metadata: bytes = METADATA,
    extra: tuple[tuple[str, bytes], ...] = (),
) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w", compression) as archive:
        for i in range(files):  # a directory larger than the 64 KiB tail, as torch's
            archive.writestr(f"many/sub/module_{i}.py", b"x = 1\n")
        archive.writestr("many-1.0.dist-info/METADATA", metadata)
        for member, data in extra:
            archive.writestr(member, data)
        archive.writestr("many-1.0.dist-info/RECORD", b"")
    return path


@pytest.fixture
def served(tmp_path):
    index = LocalIndex(tmp_path / "index").start()
    client = HttpClient(retries=0, http2=False)
    base = index.url[: -len(index.mount)]

    def url_of(wheel: Path) -> str:
        return f"{base}/files/{index.add(wheel).name}"

    yield index, client, url_of
    client.close()
    index.stop()


def test_a_directory_larger_than_the_tail_a_prefix_and_two_metadata(tmp_path, served):
    index, client, url_of = served
    plain = _wheel(tmp_path)
    assert read_wheel_metadata(client, url_of(plain))[0] == METADATA
    # a prefix before the archive (zipfile finds the archive's real offsets) and two METADATA
    # (the one of the wheel's own name)
    prefixed = tmp_path / "prefixed" / plain.name
    prefixed.parent.mkdir()
    prefixed.write_bytes(b"#!/bin/sh\n" * 100 + plain.read_bytes())
    assert read_wheel_metadata(client, url_of(prefixed))[0] == METADATA
    twice = tmp_path / "twice"
    twice.mkdir()
    wheel = _wheel(twice, extra=(("other-1.0.dist-info/METADATA", b"Name: other\n"),))
    with zipfile.ZipFile(wheel) as archive:
        expected = archive.read("many-1.0.dist-info/METADATA")
    assert read_wheel_metadata(client, url_of(wheel))[0] == expected


def test_a_damaged_member_and_an_oversized_one_are_refused_as_before(tmp_path, served):
    index, client, url_of = served
    wheel = _wheel(tmp_path, compression=zipfile.ZIP_STORED)
    data = bytearray(wheel.read_bytes())
    at = data.find(METADATA)
    data[at] ^= 0xFF  # the CRC no longer matches: zipfile's BadZipFile
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    broken.write_bytes(bytes(data))
    with pytest.raises(SourceUnreachable, match="not a readable wheel"):
        read_wheel_metadata(client, url_of(broken))
    big = tmp_path / "big"
    big.mkdir()
    huge = _wheel(big, files=10, metadata=b"Name: many\n" + b"#" * (5 * 2**20))
    with pytest.raises(SourceUnreachable, match="more than lockguard reads"):
        read_wheel_metadata(client, url_of(huge))
