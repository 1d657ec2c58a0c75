"""frame/trailer.py: vlmetalayers, trailer_len and fingerprint (frame-format.md §5).

The fixed vector is the 82-byte trailer of the §11.1 dump (one vlmetalayer ``"v"`` = "hi").
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2 import FormatError
from pyblosc2.frame.trailer import Trailer, locate_trailer
from tests.helpers import SPEC_11_1_TRAILER, SPEC_11_1_VLMETA_V, spec_11_1_frame

FRAME_LEN, HEADER_LEN, TRAILER_LEN = 467, 113, 82


def _with(buf: bytes, fmt: str, offset: int, value: int) -> bytes:
    b = bytearray(buf)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


# -- the §11.1 vector -------------------------------------------------------------------------


def test_spec_trailer_parses() -> None:
    t = Trailer.from_bytes(SPEC_11_1_TRAILER)
    assert t.vlmeta == (("v", SPEC_11_1_VLMETA_V),)
    assert (t.fingerprint_type, t.fingerprint) == (0, bytes(16))


def test_spec_trailer_written_byte_for_byte() -> None:
    assert Trailer((("v", SPEC_11_1_VLMETA_V),)).to_bytes().hex() == SPEC_11_1_TRAILER.hex()


@pytest.mark.parametrize(
    ("pos", "hexbytes"),
    [
        (0, "94"),  # fixarray(4)
        (1, "01"),  # trailer version 1
        (2, "93"),  # fixarray(3): the vlmetalayers object
        (3, "cd000d"),  # idx_size 13 = 6 + (6 + 1), counted from the CD byte
        (6, "de0001"),  # map16, 1 entry
        (9, "a176"),  # "v"
        (11, "d200000013"),  # content's C6 at T + 0x13 (relative to the trailer)
        (16, "dc0001"),
        (19, "c600000023"),  # bin32 of a 35-byte chunk
        (59, "ce00000052"),  # trailer_len 82
        (64, "d800"),  # fixext16, fingerprint type 0
        (66, "00" * 16),  # fingerprint
    ],
)
def test_spec_trailer_bytes(pos: int, hexbytes: str) -> None:
    out = Trailer((("v", SPEC_11_1_VLMETA_V),)).to_bytes()
    assert out[pos : pos + len(hexbytes) // 2].hex() == hexbytes


def test_empty_trailer_is_35_bytes() -> None:
    """§4.6: the trailer of a frame with no vlmetalayers."""
    assert Trailer().to_bytes().hex() == "940193cd0006de0000dc0000ce00000023d800" + "00" * 16


def test_locate_trailer_in_the_spec_frame() -> None:
    frame = spec_11_1_frame()
    assert locate_trailer(frame[-25:], FRAME_LEN, HEADER_LEN) == TRAILER_LEN
    assert locate_trailer(frame, FRAME_LEN, HEADER_LEN) == TRAILER_LEN  # any tail works
    assert frame[FRAME_LEN - TRAILER_LEN :] == SPEC_11_1_TRAILER


# -- round trips ------------------------------------------------------------------------------

NAMES = st.text(min_size=1, max_size=31).filter(lambda s: len(s.encode()) <= 31)


@given(
    st.lists(st.tuples(NAMES, st.binary(max_size=80)), max_size=20, unique_by=lambda e: e[0]),
    st.integers(0, 255),
    st.binary(min_size=16, max_size=16),
)
def test_roundtrip(vlmeta, fpt: int, fingerprint: bytes) -> None:
    t = Trailer(tuple(vlmeta), fpt, fingerprint)
    b = t.to_bytes()
    assert Trailer.from_bytes(b) == t
    assert struct.unpack_from(">I", b, len(b) - 22)[0] == len(b)  # trailer_len = whole trailer
    assert locate_trailer(b[-25:], len(b) + 97, 97) == len(b)


# -- malformed trailers -----------------------------------------------------------------------


@pytest.mark.parametrize("cut", range(0, 59))
def test_truncated(cut: int) -> None:
    """Any cut before the end of the vlmeta content is refused (the map or the content is
    missing)."""
    fields = r"(length|vlmeta (map marker|0 name|0 offset|'v' offset|'v' length))"
    with pytest.raises(FormatError, match=rf"^frame trailer: {fields} at offset"):
        Trailer.from_bytes(SPEC_11_1_TRAILER[:cut])


@pytest.mark.parametrize("cut", range(59, TRAILER_LEN))
def test_truncated_inside_the_tail(cut: int) -> None:
    with pytest.raises(FormatError, match=r"^frame trailer: "):
        Trailer.from_bytes(SPEC_11_1_TRAILER[:cut])


# (struct format, trailer position, bad value, message regex)
BAD_FIELDS = [
    (">B", 6, 0xDF, r"vlmeta map marker at offset 1006 is 0xdf, expected 0xde \(map16\)"),
    (">B", 6, 0x81, r"vlmeta map marker at offset 1006 is 0x81"),
    (">H", 7, 8193, r"vlmeta count at offset 1007 is 8193, expected at most 8192"),
    (">H", 7, 0xFFFF, r"vlmeta count at offset 1007 is 65535"),
    (">H", 7, 2, r"vlmeta 1 name at offset 1016 is .*, expected a fixstr"),
    (">B", 9, 0xD9, r"vlmeta 0 name at offset 1009 is 0xd9, expected a fixstr"),
    (">B", 9, 0xBF, r"vlmeta 0 offset at offset 1041 is missing"),
    (">B", 11, 0xCE, r"vlmeta 0 offset at offset 1011 is missing, expected an int32"),
    (">i", 12, 0, r"vlmeta 'v' offset at offset 1012 is 0, expected the position of a bin32"),
    (">i", 12, -1, r"vlmeta 'v' offset at offset 1012 is -1"),
    (">i", 12, 2**31 - 1, r"vlmeta 'v' offset at offset 1012 is 2147483647"),
    (">i", 12, 0x14, r"vlmeta 'v' offset at offset 1012 is 20"),
    (">B", 19, 0xC4, r"vlmeta 'v' offset at offset 1012 is 19"),
    (">I", 20, 59, r"vlmeta 'v' length at offset 1020 is 59, expected at most 35"),
    (">I", 20, 2**32 - 1, r"vlmeta 'v' length at offset 1020 is 4294967295"),
]


@pytest.mark.parametrize(
    ("fmt", "pos", "value", "message"), BAD_FIELDS, ids=[f"{p}={v}" for _, p, v, _ in BAD_FIELDS]
)
def test_bad_field(fmt: str, pos: int, value: int, message: str) -> None:
    """Errors name the frame position (``start`` + the trailer offset)."""
    with pytest.raises(FormatError, match=f"^frame trailer: {message}"):
        Trailer.from_bytes(_with(SPEC_11_1_TRAILER, fmt, pos, value), start=1000)


@pytest.mark.parametrize(
    ("fmt", "pos", "value"),
    [(">B", 0, 0x95), (">B", 1, 7), (">B", 2, 0x92), (">H", 4, 0), (">H", 17, 5)],
    ids=["fixarray", "version", "vl-fixarray", "idx_size", "dc-count"],
)
def test_tags_c_does_not_check(fmt: str, pos: int, value: int) -> None:
    """§5.1: C ignores 94, the version, 93, idx_size and the DC array; so do we."""
    t = Trailer.from_bytes(_with(SPEC_11_1_TRAILER, fmt, pos, value))
    assert t.vlmeta == (("v", SPEC_11_1_VLMETA_V),)


def test_fingerprint_is_read_not_validated() -> None:
    """§5.4: a non-zero fingerprint type and payload are kept, not checked."""
    buf = SPEC_11_1_TRAILER[:65] + bytes([3]) + bytes(range(16))
    t = Trailer.from_bytes(buf)
    assert (t.fingerprint_type, t.fingerprint) == (3, bytes(range(16)))
    assert t.to_bytes() == buf


@pytest.mark.parametrize("size", [0, 1, 24])
def test_locate_short_tail(size: int) -> None:
    with pytest.raises(FormatError, match=rf"^frame trailer: length is {size}, expected at least"):
        locate_trailer(SPEC_11_1_TRAILER[-size:] if size else b"", FRAME_LEN, HEADER_LEN)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, r"trailer_len at offset 445 is 0, expected 25\.\.354"),
        (24, r"trailer_len at offset 445 is 24, expected 25\.\.354"),
        (355, r"trailer_len at offset 445 is 355, expected 25\.\.354"),
        (2**32 - 1, r"trailer_len at offset 445 is 4294967295"),
    ],
)
def test_locate_bad_trailer_len(value: int, message: str) -> None:
    tail = _with(SPEC_11_1_TRAILER[-25:], ">I", 3, value)
    with pytest.raises(FormatError, match=f"^frame trailer: {message}"):
        locate_trailer(tail, FRAME_LEN, HEADER_LEN)


@pytest.mark.parametrize("marker", [0xCD, 0xD2, 0x00])
def test_locate_bad_marker(marker: int) -> None:
    tail = _with(SPEC_11_1_TRAILER[-25:], ">B", 2, marker)
    with pytest.raises(FormatError, match=rf"trailer_len marker at offset 444 is {hex(marker)}"):
        locate_trailer(tail, FRAME_LEN, HEADER_LEN)
