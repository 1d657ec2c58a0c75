"""The zip central directory read in place (stores/zipindex.py): offsets of stored members
for every way a zip tool writes them, and a FormatError (fast, no big allocation) for every
malformed archive."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pytest

from pyblosc2.backends.memory import MemoryStore
from pyblosc2.errors import FormatError
from pyblosc2.stores.zipindex import CENTRAL, EOCD, LOCAL, ZipIndex, check_member_name

MEMBERS = {"big/leaf.b2nd": bytes(range(256)) * 40, "a.b2f": b"frame-a", "embed.b2e": b"E" * 99}


def _archive(**kwargs: object) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", **kwargs) as zf:  # type: ignore[arg-type]
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
    return buf.getvalue()


class _Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes data descriptors after each member."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int:
        data = bytes(b)  # type: ignore[call-overload]
        self.buf += data
        return len(data)


def _check(raw: bytes, stored: bool = True) -> ZipIndex:
    index = ZipIndex.read(MemoryStore(raw))
    assert list(index) == list(MEMBERS)
    for name, data in MEMBERS.items():
        m = index[name]
        assert m.stored is stored
        if stored:
            assert raw[m.offset : m.offset + m.length] == data
    return index


def test_stored_members() -> None:
    _check(_archive(compression=zipfile.ZIP_STORED))


def test_deflated_members_are_not_stored() -> None:
    _check(_archive(compression=zipfile.ZIP_DEFLATED), stored=False)


def test_archive_comment() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
        zf.comment = b"PK\x05\x06 a comment that looks like a record" * 10
    _check(buf.getvalue())


def test_zip64_records() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in MEMBERS.items():
            with zf.open(zipfile.ZipInfo(name), "w", force_zip64=True) as f:
                f.write(data)
    _check(buf.getvalue())


def test_data_descriptors() -> None:
    out = _Unseekable()
    with zipfile.ZipFile(out, "w") as zf:  # type: ignore[arg-type]
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
    raw = bytes(out.buf)
    assert struct.unpack_from("<H", raw, 6)[0] & 0x8  # the descriptor flag is set
    _check(raw)


def test_local_extra_field_differs_from_central() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("a.b2f")
        info.extra = struct.pack("<HH", 0xCAFE, 8) + b"12345678"
        zf.writestr(info, b"frame-a")
    raw = buf.getvalue()
    m = ZipIndex.read(MemoryStore(raw))["a.b2f"]
    assert raw[m.offset : m.offset + m.length] == b"frame-a"


def test_directory_entries_are_skipped() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("dir1/", b"")
        zf.writestr("dir1/x.b2nd", b"x")
    assert list(ZipIndex.read(MemoryStore(buf.getvalue()))) == ["dir1/x.b2nd"]


class _Counting(MemoryStore):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.prefetched: list[tuple[int, int]] = []

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        self.prefetched += spans


def test_local_headers_prefetched_together() -> None:
    store = _Counting(_archive())
    index = ZipIndex.read(store)
    assert len(store.prefetched) == len(index) == 3


# -- malformed archives ---------------------------------------------------------------------
RAW = _archive()
EOCD_AT = RAW.rindex(b"PK\x05\x06")
CD_AT = struct.unpack_from("<I", RAW, EOCD_AT + 16)[0]


@pytest.mark.parametrize("cut", sorted({0, 10, 21, *range(CD_AT, len(RAW), 7), len(RAW) - 1}))
def test_truncated(cut: int) -> None:
    with pytest.raises(FormatError):
        ZipIndex.read(MemoryStore(RAW[:cut]))


def _patched(pos: int, fmt: str, value: int) -> bytes:
    raw = bytearray(RAW)
    struct.pack_into(fmt, raw, pos, value)
    return bytes(raw)


CASES = {
    "cd offset huge": (EOCD_AT + 16, "<I", 0x7FFFFFF0),
    "cd size huge": (EOCD_AT + 12, "<I", 0x7FFFFFF0),
    "entry count huge": (EOCD_AT + 10, "<H", 0xFFFE),
    "cd offset zip64 marker, no locator": (EOCD_AT + 16, "<I", 0xFFFFFFFF),
    "central signature": (CD_AT, "<I", 0x12345678),
    "name length huge": (CD_AT + 28, "<H", 0xFFFF),
    "compressed size huge": (CD_AT + 20, "<I", 0x7FFFFFFF),
    "local header offset huge": (CD_AT + 42, "<I", 0x7FFFFFF0),
    "local header offset zip64 marker, no extra": (CD_AT + 42, "<I", 0xFFFFFFFF),
    "local header signature": (0, "<I", 0),
    "local name length huge": (26, "<H", 0xFFFF),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_fields(case: str) -> None:
    pos, fmt, value = CASES[case]
    with pytest.raises(FormatError):
        ZipIndex.read(MemoryStore(_patched(pos, fmt, value)))


def test_not_an_archive() -> None:
    with pytest.raises(FormatError, match="end of central directory"):
        ZipIndex.read(MemoryStore(b"\x9e\xa8b2frame\x00" + bytes(200)))


def test_repeated_member_name() -> None:
    buf = io.BytesIO()
    with pytest.warns(UserWarning), zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.b2f", b"1")
        zf.writestr("a.b2f", b"2")
    with pytest.raises(FormatError, match="repeated"):
        ZipIndex.read(MemoryStore(buf.getvalue()))


@pytest.mark.parametrize(
    "name", ["../x.b2nd", "/abs.b2nd", "a/../../x", "a\\b.b2nd", "C:/x.b2nd", "a/./b", "./a"]
)
def test_unsafe_member_names(name: str) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("x")
        info.filename = name  # set after construction: zipfile keeps the name as given
        zf.writestr(info, b"x")
    with pytest.raises(FormatError, match="member name"):
        ZipIndex.read(MemoryStore(buf.getvalue()))
    with pytest.raises(FormatError):
        check_member_name(name)


def test_layout_sizes() -> None:
    assert (EOCD.size, CENTRAL.size, LOCAL.size) == (22, 46, 30)


def _overlapping() -> bytes:
    """Two central entries naming one local header and its data (the overlapping-member
    zip bomb: a small archive whose members all unpack the same bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.b2f", b"x" * 1000)
        zf.writestr("b.b2f", b"y" * 1000)
    raw = bytearray(buf.getvalue())
    eocd = raw.rindex(b"PK\x05\x06")
    second = raw.index(b"PK\x01\x02", struct.unpack_from("<I", raw, eocd + 16)[0] + 4)
    struct.pack_into("<I", raw, second + 42, 0)  # b.b2f's local header is a.b2f's
    return bytes(raw)


def test_overlapping_members() -> None:
    with pytest.raises(FormatError, match=r"data of 'a.b2f' at offset 0 is \d+, expected to end"):
        ZipIndex.read(MemoryStore(_overlapping()))


def test_a_member_that_is_also_a_directory() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a/b", b"1")
        zf.writestr("a/b/c.b2nd", b"2")
    with pytest.raises(FormatError, match=r"member name is 'a/b', expected not also the dir"):
        ZipIndex.read(MemoryStore(buf.getvalue()))


def test_member_name_segments_fit_a_file_name() -> None:
    assert check_member_name("d/" + "n" * 255) == "d/" + "n" * 255
    with pytest.raises(FormatError, match="each of at most 255 bytes"):
        check_member_name("d/" + "n" * 256)
    with pytest.raises(FormatError, match="each of at most 255 bytes"):
        check_member_name("é" * 128)  # 256 bytes of UTF-8


def test_members_declare_method_size_and_crc() -> None:
    index = ZipIndex.read(MemoryStore(_archive(compression=zipfile.ZIP_DEFLATED)))
    m = index["big/leaf.b2nd"]
    data = MEMBERS["big/leaf.b2nd"]
    assert (m.method, m.size, m.crc, m.encrypted) == (8, len(data), zlib.crc32(data), False)


def test_a_name_flagged_utf8_that_is_not() -> None:
    """Found by the b2z fuzz target: a UnicodeDecodeError escaped."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("é.b2nd", b"x")  # zipfile sets flag bit 11 for a non-ASCII name
    raw = bytearray(buf.getvalue())
    cd = raw.index(b"PK\x01\x02")
    raw[cd + CENTRAL.size] = 0xF8  # no UTF-8 sequence starts with 0xF8
    with pytest.raises(FormatError, match=r"member name at offset \d+ is invalid start byte"):
        ZipIndex.read(MemoryStore(bytes(raw)))
