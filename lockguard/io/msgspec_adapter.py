"""The one adapter around msgspec: a PEP 691 project page decoded straight into typed file entries
(the index side), and the typed msgpack files of the environment scan's memos (io/env/scan_memo.py).

Index pages are most of a cold resolve's CPU (pydantic-core's page is 7 MB with 15,000 files):
msgspec decodes and type-checks a page in C about five times faster than `json.loads` followed by
a check of every entry in Python. It is only a faster way to the same answer: a page msgspec
refuses in any way (bad JSON, a field of the wrong type) or a missing msgspec returns None, and
simple_index then reads the page with the standard library and names what is wrong. The fast path
may refuse more than the standard one, never accept more.
"""

try:  # a dependency of lockguard; a platform without its wheel still resolves, more slowly
    import msgspec
except ImportError:  # pragma: no cover - exercised by forcing DECODER to None in the tests
    # the optional-import idiom: mypy types the name as the module
    msgspec = None  # type: ignore[assignment]

# no `from __future__ import annotations` here: msgspec reads these annotations at class creation

if msgspec is not None:
    UNSET = msgspec.UNSET

    class PageFile(msgspec.Struct, gc=False):
        """The fields of a PEP 691 file entry that lockguard reads (others are skipped unparsed).
        gc=False: tens of thousands per resolve, never part of a cycle
        (strings, dicts of strings)."""

        filename: str
        url: str
        hashes: dict[str, str] | None = None
        requires_python: str | None = msgspec.field(default=None, name="requires-python")
        yanked: bool | str | None = None
        # UNSET: the key is absent (an explicit null is not the same: it hides the older key)
        core_metadata: bool | dict[str, str] | None | msgspec.UnsetType = msgspec.field(
            default=UNSET, name="core-metadata"
        )
        dist_info_metadata: bool | dict[str, str] | None | msgspec.UnsetType = msgspec.field(
            default=UNSET, name="data-dist-info-metadata"
        )
        upload_time: str | None = msgspec.field(default=None, name="upload-time")
        size: int | None = None

    class _Page(msgspec.Struct):
        files: list[PageFile] = []

    DECODER = msgspec.json.Decoder(_Page)
else:  # pragma: no cover
    UNSET = object()
    DECODER = None


def page_files(body: bytes) -> list | None:
    """The typed file entries of a PEP 691 page; None when msgspec is absent or refuses the page
    (the caller then reads it with the standard library, which says what is wrong)."""
    if DECODER is None:
        return None
    try:
        return DECODER.decode(body).files
    except msgspec.DecodeError:  # ValidationError is a DecodeError
        return None


class TypedMsgpack:
    """msgpack bytes <-> (header text, {name: entry}) checked against `entry_type` on the way in:
    a memo file that does not decode to exactly that shape is None, never a half-trusted value.
    Unusable (`available` False) without msgspec: the caller then keeps nothing."""

    def __init__(self, entry_type) -> None:
        self.available = msgspec is not None
        if self.available:
            self._type = msgspec.defstruct(
                "MemoFile", [("header", str), ("entries", dict[str, entry_type])], array_like=True
            )

    def encode(self, header: str, entries: dict) -> bytes | None:
        """None for what msgpack cannot hold (text that is not UTF-8, a value of another type)."""
        try:
            return msgspec.msgpack.encode(self._type(header, entries))
        except (msgspec.EncodeError, UnicodeEncodeError, ValueError, TypeError):
            return None

    def decode(self, data: bytes) -> tuple[str, dict] | None:
        try:
            memo = msgspec.msgpack.decode(data, type=self._type)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, RecursionError):
            return None
        # the struct defstruct built: (header, entries)
        header, entries = msgspec.structs.astuple(memo)
        return header, entries
