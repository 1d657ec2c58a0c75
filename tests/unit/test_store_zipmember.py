"""One zip member's bytes (stores/zipmember.py): stored members copied and deflated ones
inflated in bounded pieces, and every declared size, CRC-32, flag and method that does not
hold refused with a FormatError (or NotImplementedError naming the method) — before a byte is
read where the directory alone tells."""

from __future__ import annotations

import dataclasses
import io
import zipfile
import zlib

import pytest

from pyblosc2.backends.memory import MemoryStore
from pyblosc2.errors import FormatError
from pyblosc2.stores import zipmember
from pyblosc2.stores.zipindex import Member, ZipIndex
from pyblosc2.stores.zipmember import INFLATE_RATIO, check_member, member_bytes, member_pieces

DATA = bytes(range(256)) * 5000  # 1.28 MB: more than one piece


def _archive(data: bytes, compression: int) -> tuple[MemoryStore, Member]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        zf.writestr("a/x.b2nd", data)
    store = MemoryStore(buf.getvalue())
    return store, ZipIndex.read(store)["a/x.b2nd"]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_member_bytes(compression: int) -> None:
    store, m = _archive(DATA, compression)
    assert m.size == len(DATA) and m.crc == zlib.crc32(DATA)
    assert member_bytes(store, m, "z") == DATA
    assert all(len(p) <= zipmember.PIECE for p in member_pieces(store, m, "z"))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_empty_member(compression: int) -> None:
    store, m = _archive(b"", compression)
    assert member_bytes(store, m, "z") == b""


def _forged(m: Member, **changes: object) -> Member:
    return dataclasses.replace(m, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("delta", [-1, 1])
def test_declared_size_wrong(compression: int, delta: int) -> None:
    store, m = _archive(DATA, compression)
    forged = _forged(m, size=m.size + delta)
    with pytest.raises(FormatError, match="uncompressed size"):
        member_bytes(store, forged, "z")


def test_crc_wrong() -> None:
    store, m = _archive(DATA, zipfile.ZIP_DEFLATED)
    with pytest.raises(FormatError, match=r"CRC-32 is 0x[0-9a-f]+, expected 0x"):
        member_bytes(store, _forged(m, crc=m.crc ^ 1), "z")


def test_deflate_bomb_refused_before_reading() -> None:
    """A declared size past deflate's 1032:1 is refused from the directory alone."""
    _, m = _archive(bytes(10_000_000), zipfile.ZIP_DEFLATED)
    assert m.size <= m.length * INFLATE_RATIO  # what zlib makes is within the rule
    forged = _forged(m, size=m.length * INFLATE_RATIO + 1)
    with pytest.raises(FormatError, match=r"uncompressed size is \d+, expected at most"):
        check_member(forged, "z")


def test_a_member_inflating_past_its_size_stops_at_that_piece() -> None:
    store, m = _archive(bytes(10_000_000), zipfile.ZIP_DEFLATED)
    pieces = member_pieces(store, _forged(m, size=100), "z")
    with pytest.raises(FormatError, match="more than 100"):
        next(pieces)


def test_cut_deflate_stream() -> None:
    store, m = _archive(DATA, zipfile.ZIP_DEFLATED)
    with pytest.raises(FormatError, match="deflate stream"):
        member_bytes(store, _forged(m, length=m.length // 2), "z")


def test_bad_deflate_data() -> None:
    store, m = _archive(DATA, zipfile.ZIP_DEFLATED)
    raw = bytearray(store.read(0, store.size))
    raw[m.offset] = 0xFF  # block type 3: reserved
    with pytest.raises(FormatError, match="deflate data"):
        member_bytes(MemoryStore(bytes(raw)), m, "z")


def test_stored_sizes_must_agree() -> None:
    _, m = _archive(DATA, zipfile.ZIP_STORED)
    with pytest.raises(FormatError, match="uncompressed size"):
        check_member(_forged(m, size=2**32), "z")


def test_encrypted_refused() -> None:
    _, m = _archive(DATA, zipfile.ZIP_STORED)
    with pytest.raises(FormatError, match="encrypted"):
        check_member(_forged(m, encrypted=True), "z")


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_other_methods_named(compression: int) -> None:
    store, m = _archive(DATA, compression)
    with pytest.raises(NotImplementedError, match=rf"compression method {compression} \("):
        member_bytes(store, m, "z")


def test_limit_refused_before_reading() -> None:
    store, m = _archive(DATA, zipfile.ZIP_STORED)
    with pytest.raises(FormatError, match=rf"size is {len(DATA)}, expected at most 100"):
        member_bytes(store, m, "z", limit=100)


def test_a_member_cut_by_the_archive_end() -> None:
    store, m = _archive(DATA, zipfile.ZIP_STORED)
    short = MemoryStore(bytes(store.read(0, m.offset + 1000)))
    with pytest.raises(FormatError, match=r"member 'a/x.b2nd' at offset \d+ is \d+, expected"):
        member_bytes(short, m, "z")
