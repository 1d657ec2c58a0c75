"""frame/header.py: the 87-byte prefix and the metalayer section (frame-format.md §2, §3).

No reference library: the fixed vector is the annotated dump of §11.1, which ``build_cframe``
reproduces byte for byte.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2 import FormatError
from pyblosc2.errors import TruncatedError
from pyblosc2.frame.header import FrameHeader
from pyblosc2.frame.writer import build_cframe
from pyblosc2.meta import packb
from tests.helpers import SPEC_11_1_HEADER, SPEC_11_1_VLMETA_V, spec_11_1_chunks, spec_11_1_frame


def _with(buf: bytes, fmt: str, offset: int, value: int) -> bytes:
    b = bytearray(buf)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


# -- the §11.1 vector -------------------------------------------------------------------------


def test_build_cframe_writes_the_spec_dump() -> None:
    frame = build_cframe(
        spec_11_1_chunks(),
        typesize=4,
        chunksize=40,
        metalayers=[("m1", packb([1, 2]))],
        vlmeta=[("v", SPEC_11_1_VLMETA_V)],
    )
    assert frame[:113].hex() == SPEC_11_1_HEADER.hex()
    assert frame == spec_11_1_frame()


# (position, size, bytes) of every field of the §2.1 table in the §11.1 header
SPEC_PREFIX = [
    (0x00, 1, "9e"),  # fixarray(14)
    (0x01, 1, "a8"),  # fixstr(8)
    (0x02, 8, "62326672616d6500"),  # magic b"b2frame\0"
    (0x0A, 1, "d2"),
    (0x0B, 4, "00000071"),  # header_len 113
    (0x0F, 1, "cf"),
    (0x10, 8, "00000000000001d3"),  # frame_len 467
    (0x18, 1, "a4"),
    (0x19, 1, "12"),  # general_flags: version 2, 64-bit offsets
    (0x1A, 1, "00"),  # frame_type: contiguous
    (0x1B, 1, "55"),  # codec_flags: clevel 5, zstd
    (0x1C, 1, "02"),  # other_flags: AUTO_SPLIT - 1
    (0x1D, 1, "d3"),
    (0x1E, 8, "0000000000000078"),  # nbytes 120
    (0x26, 1, "d3"),
    (0x27, 8, "00000000000000d8"),  # cbytes 216
    (0x2F, 1, "d2"),
    (0x30, 4, "00000004"),  # typesize
    (0x34, 1, "d2"),
    (0x35, 4, "00000000"),  # blocksize (automatic)
    (0x39, 1, "d2"),
    (0x3A, 4, "00000028"),  # chunksize 40
    (0x3E, 1, "d1"),
    (0x3F, 2, "0001"),  # cthreads
    (0x41, 1, "d1"),
    (0x42, 2, "0001"),  # dthreads
    (0x44, 1, "c3"),  # has_vlmetalayers
    (0x45, 1, "d8"),  # fixext16
    (0x46, 1, "06"),  # filter slots
    (0x47, 6, "000000000001"),  # filters: SHUFFLE in slot 5
    (0x4D, 1, "05"),  # udcodec = the codec id, always
    (0x4E, 1, "00"),  # compcode_meta
    (0x4F, 6, "000000000000"),  # filters_meta
    (0x55, 1, "00"),  # other_flags2
    (0x56, 1, "00"),  # reserved
    (0x57, 1, "93"),  # metalayer section (§3.1)
    (0x58, 3, "cd000f"),  # idx_size 15
    (0x5B, 3, "de0001"),  # map16, 1 entry
    (0x5E, 3, "a26d31"),  # "m1"
    (0x61, 5, "d200000069"),  # content at absolute 0x69
    (0x66, 3, "dc0001"),
    (0x69, 5, "c600000003"),  # bin32 of 3 bytes
    (0x6E, 3, "920102"),  # msgpack [1, 2]
]


@pytest.mark.parametrize(
    ("pos", "size", "hexbytes"), SPEC_PREFIX, ids=[hex(p) for p, _, _ in SPEC_PREFIX]
)
def test_spec_header_bytes(pos: int, size: int, hexbytes: str) -> None:
    header = FrameHeader.from_bytes(SPEC_11_1_HEADER, buffer_len=467).to_bytes()
    assert header[pos : pos + size].hex() == hexbytes


def test_spec_header_fields() -> None:
    h = FrameHeader.from_bytes(SPEC_11_1_HEADER, buffer_len=467)
    assert (h.header_len, h.frame_len, h.general_flags, h.frame_type) == (113, 467, 0x12, 0)
    assert (h.codec_flags, h.other_flags, h.nbytes, h.cbytes) == (0x55, 2, 120, 216)
    assert (h.typesize, h.blocksize, h.chunksize, h.cthreads, h.dthreads) == (4, 0, 40, 1, 1)
    assert h.has_vlmeta is True
    assert h.filters == (0, 0, 0, 0, 0, 1) and h.filters_meta == (0,) * 6
    assert (h.udcodec, h.compcode_meta, h.other_flags2) == (5, 0, 0)
    assert h.metalayers == (("m1", bytes.fromhex("920102")),)
    # derived
    assert (h.version, h.codec, h.clevel, h.splitmode, h.use_dict) == (2, 5, 5, 3, False)
    assert h.nchunks_fixed == 3


def test_empty_header_is_97_bytes() -> None:
    """§3.1/§4.6: no metalayers → the 10-byte section ``93 CD 0007 DE 0000 DC 0000``."""
    h = FrameHeader(97, 132, 0x12, 0, 0x55, 2, 0, 0, 4, 0, -1)
    b = h.to_bytes()
    assert len(b) == 97
    assert b[87:].hex() == "93cd0007de0000dc0000"
    assert FrameHeader.from_bytes(b, buffer_len=132) == h


@pytest.mark.parametrize(
    ("codec_flags", "udcodec", "codec", "clevel"),
    [(0x55, 5, 5, 5), (0x51, 1, 1, 5), (0x94, 4, 4, 9), (0x06, 33, 33, 0), (0x36, 160, 160, 3)],
)
def test_codec_nibble_and_udcodec(codec_flags: int, udcodec: int, codec: int, clevel: int) -> None:
    """§2.4: nibble 6 means "the id is in udcodec"."""
    h = FrameHeader(97, 132, 0x12, 0, codec_flags, 2, 0, 0, 4, 0, -1, udcodec=udcodec)
    assert (h.codec, h.clevel) == (codec, clevel)


@pytest.mark.parametrize(
    ("nbytes", "chunksize", "expected"),
    [(0, -1, 0), (0, 40, 0), (120, 40, 3), (121, 40, 4), (39, 40, 1), (120, 0, None)],
)
def test_nchunks_fixed(nbytes: int, chunksize: int, expected: int | None) -> None:
    """§4.4: ceil(nbytes / chunksize); variable-size chunks (0) leave it to the index."""
    h = FrameHeader(97, 10_000, 0x12, 0, 0x55, 2, nbytes, 0, 4, 0, chunksize)
    assert h.nchunks_fixed == expected


# -- round trips ------------------------------------------------------------------------------

NAMES = st.text(min_size=1, max_size=31).filter(lambda s: len(s.encode()) <= 31)
METALAYERS = st.lists(
    st.tuples(NAMES, st.binary(max_size=64)), max_size=16, unique_by=lambda m: m[0]
)
BYTE = st.integers(0, 255)


@st.composite
def headers(draw: st.DrawFn) -> FrameHeader:
    metalayers = tuple(draw(METALAYERS))
    header_len = len(
        FrameHeader(0, 0, 0x12, 0, 0, 0, 0, 0, 1, 0, 0, metalayers=metalayers).to_bytes()
    )
    nbytes = draw(st.integers(0, 2**63 - 1))
    frame_len = draw(st.integers(header_len + 25, 2**40))
    return FrameHeader(
        header_len=header_len,
        frame_len=frame_len,
        general_flags=draw(st.integers(0, 3)) | 0x10 | draw(st.sampled_from([0, 0x40, 0x80, 0xC0])),
        frame_type=draw(st.sampled_from([0, 1])),
        codec_flags=draw(BYTE),
        other_flags=draw(BYTE),
        nbytes=nbytes,
        cbytes=draw(st.integers(0, frame_len - header_len)),
        typesize=draw(st.integers(1, 255)),
        blocksize=draw(st.integers(-(2**31), 2**31 - 1)),
        chunksize=draw(st.integers(0 if nbytes else -1, 2**31 - 1)),
        cthreads=draw(st.integers(-(2**15), 2**15 - 1)),
        dthreads=draw(st.integers(-(2**15), 2**15 - 1)),
        has_vlmeta=draw(st.booleans()),
        filters=tuple(draw(st.lists(BYTE, min_size=6, max_size=6))),
        udcodec=draw(BYTE),
        compcode_meta=draw(BYTE),
        filters_meta=tuple(draw(st.lists(BYTE, min_size=6, max_size=6))),
        other_flags2=draw(BYTE),
        metalayers=metalayers,
    )


@given(headers())
def test_roundtrip(h: FrameHeader) -> None:
    b = h.to_bytes()
    assert len(b) == h.header_len
    assert FrameHeader.from_bytes(b, buffer_len=h.frame_len) == h
    assert FrameHeader.from_bytes(b + bytes(7), buffer_len=h.frame_len) == h  # data follows


@given(METALAYERS)
def test_metalayer_offsets_point_at_their_bin32(metalayers) -> None:
    """§3.1: each entry's int32 is the absolute position of its ``C6`` byte."""
    h = FrameHeader(0, 1 << 20, 0x12, 0, 0x55, 2, 0, 0, 4, 0, -1, metalayers=tuple(metalayers))
    b = h.to_bytes()
    assert FrameHeader.from_bytes(b, buffer_len=1 << 20).metalayers == tuple(metalayers)
    assert struct.unpack_from(">H", b, 89)[0] == 7 + sum(6 + len(n.encode()) for n, _ in metalayers)


# -- malformed headers ------------------------------------------------------------------------


@pytest.mark.parametrize("cut", range(len(SPEC_11_1_HEADER)))
def test_truncated_at_every_offset(cut: int) -> None:
    field = "length at offset 0" if cut < 87 else "header_len at offset 11"
    with pytest.raises(FormatError, match=f"^frame header: {field} is {cut if cut < 87 else 113}"):
        FrameHeader.from_bytes(SPEC_11_1_HEADER[:cut])


def test_frame_len_beyond_buffer_is_a_truncation() -> None:
    with pytest.raises(
        TruncatedError, match=r"frame_len at offset 16 is 467, expected at most 466 .*: truncated$"
    ) as exc:
        FrameHeader.from_bytes(SPEC_11_1_HEADER, buffer_len=466)
    assert isinstance(exc.value, RuntimeError)  # what python-blosc2 raises for it


# (field, struct format, position, bad value, message regex)
BAD_FIELDS = [
    ("header_len", ">i", 11, 0, r"header_len at offset 11 is 0, expected 97\.\."),
    ("header_len", ">i", 11, -1, r"header_len at offset 11 is -1, expected 97\.\."),
    ("header_len", ">i", 11, 96, r"header_len at offset 11 is 96, expected 97\.\."),
    ("header_len", ">i", 11, 2**31 - 1, r"header_len at offset 11 is 2147483647"),
    ("frame_len", ">Q", 16, 0, r"frame_len at offset 16 is 0, expected 122\.\."),
    ("frame_len", ">Q", 16, 121, r"frame_len at offset 16 is 121, expected 122\.\."),
    ("frame_len", ">Q", 16, 2**64 - 1, rf"frame_len at offset 16 is {2**64 - 1}.*: truncated$"),
    (
        "frame_len",
        ">Q",
        16,
        468,
        r"frame_len at offset 16 is 468, expected at most 467 .*: truncated$",
    ),
    ("version", ">B", 25, 0x14, r"general_flags at offset 25 is 4, expected a format version"),
    ("version", ">B", 25, 0x1F, r"general_flags at offset 25 is 15"),
    ("frame_type", ">B", 26, 2, r"frame_type at offset 26 is 2"),
    ("frame_type", ">B", 26, 0x10, r"frame_type at offset 26 is 16"),
    ("nbytes", ">q", 30, -1, r"nbytes at offset 30 is -1, expected >= 0"),
    ("cbytes", ">q", 39, -1, r"cbytes at offset 39 is -1, expected >= 0"),
    ("cbytes", ">q", 39, 2**63 - 1, r"cbytes at offset 39 is \d+, expected at most .* = 354"),
    ("cbytes", ">q", 39, 355, r"cbytes at offset 39 is 355, expected at most .* = 354"),
    ("typesize", ">i", 48, 0, r"typesize at offset 48 is 0, expected 1\.\."),
    ("typesize", ">i", 48, -1, r"typesize at offset 48 is -1"),
    ("typesize", ">i", 48, 2**31 - 1, r"typesize at offset 48 is 2147483647"),
    ("chunksize", ">i", 58, -1, r"chunksize at offset 58 is -1, expected >= 0 when"),
    ("nfilters", ">B", 70, 7, r"nfilters at offset 70 is 7, expected at most 6"),
    ("nfilters", ">B", 70, 255, r"nfilters at offset 70 is 255"),
    ("map marker", ">B", 91, 0xDF, r"metalayer map marker at offset 91 is 0xdf"),
    ("count", ">H", 92, 17, r"metalayer count at offset 92 is 17, expected at most 16"),
    ("count", ">H", 92, 0xFFFF, r"metalayer count at offset 92 is 65535"),
    ("count", ">H", 92, 2, r"metalayer 1 name at offset 102 is 0xdc, expected a fixstr"),
    ("name", ">B", 94, 0xD9, r"metalayer 0 name at offset 94 is 0xd9, expected a fixstr"),
    ("name", ">B", 94, 0xBF, r"metalayer 0 offset at offset 126 is missing"),
    ("offset marker", ">B", 97, 0xCE, r"metalayer 0 offset at offset 97 is missing"),
    ("offset", ">i", 98, 0, r"metalayer 'm1' offset at offset 98 is 0, expected the position"),
    ("offset", ">i", 98, -1, r"metalayer 'm1' offset at offset 98 is -1"),
    ("offset", ">i", 98, 2**31 - 1, r"metalayer 'm1' offset at offset 98 is 2147483647"),
    ("offset", ">i", 98, 0x6A, r"metalayer 'm1' offset at offset 98 is 106"),
    ("bin32 marker", ">B", 0x69, 0xC5, r"metalayer 'm1' offset at offset 98 is 105"),
    ("length", ">I", 0x6A, 4, r"metalayer 'm1' length at offset 106 is 4, expected at most 3"),
    ("length", ">I", 0x6A, 2**32 - 1, r"metalayer 'm1' length at offset 106 is 4294967295"),
]


@pytest.mark.parametrize(
    ("field", "fmt", "pos", "value", "message"),
    BAD_FIELDS,
    ids=[f"{f}={v}" for f, _, _, v, _ in BAD_FIELDS],
)
def test_bad_field(field: str, fmt: str, pos: int, value: int, message: str) -> None:
    with pytest.raises(FormatError, match=f"^frame header: {message}"):
        FrameHeader.from_bytes(_with(SPEC_11_1_HEADER, fmt, pos, value), buffer_len=467)


@pytest.mark.parametrize("width", [0x00, 0x20, 0x30])
def test_offset_width_other_than_64_bits(width: int) -> None:
    """§2.2: only 64-bit offsets exist; anything else is refused as unsupported."""
    with pytest.raises(NotImplementedError, match=r"frame offsets wider than 64 bits"):
        FrameHeader.from_bytes(_with(SPEC_11_1_HEADER, ">B", 25, 0x02 | width), buffer_len=467)


@pytest.mark.parametrize(
    ("field", "fmt", "pos", "value"),
    [
        ("nbytes", ">q", 30, 0),
        ("cbytes", ">q", 39, 0),
        ("chunksize", ">i", 58, 0),
        ("blocksize", ">i", 53, -1),
        ("cthreads", ">h", 63, -1),
        ("flag bits 6-7", ">B", 25, 0xD3),  # bits 6-7 are informational (§2.2)
        ("has_vlmeta", ">B", 68, 0xC2),
    ],
)
def test_values_readers_accept(field: str, fmt: str, pos: int, value: int) -> None:
    """§2.9/§2.10: fields C does not validate are read back as they are."""
    h = FrameHeader.from_bytes(_with(SPEC_11_1_HEADER, fmt, pos, value), buffer_len=467)
    assert h.to_bytes() == _with(SPEC_11_1_HEADER, fmt, pos, value)


def test_metalayer_section_limits() -> None:
    """§3.2: at most 16 metalayers, names of 1..31 bytes (the writer refuses the rest)."""
    many = tuple((f"m{i}", b"") for i in range(17))
    with pytest.raises(ValueError, match=r"at most 16 metalayers, got 17"):
        FrameHeader(0, 0, 0x12, 0, 0, 0, 0, 0, 1, 0, 0, metalayers=many).to_bytes()
    for name in ("", "x" * 32):
        with pytest.raises(ValueError, match=r"metalayer names must have 1\.\.31 bytes"):
            FrameHeader(0, 0, 0x12, 0, 0, 0, 0, 0, 1, 0, 0, metalayers=((name, b""),)).to_bytes()


# -- checks C does not make but a reader should (land with the frame refactor) ---------------


@pytest.mark.parametrize("pos", range(2, 10))
def test_bad_magic(pos: int) -> None:
    bad = bytearray(SPEC_11_1_HEADER)
    bad[pos] ^= 0x20
    with pytest.raises(FormatError, match=r"^frame header: magic at offset 2 is"):
        FrameHeader.from_bytes(bytes(bad), buffer_len=467)


# the fixed msgpack tags of the 87-byte prefix (§2.1)
PREFIX_MARKERS = [0x00, 0x01, 0x0A, 0x0F, 0x18, 0x1D, 0x26, 0x2F, 0x34, 0x39, 0x3E, 0x41, 0x45]


@pytest.mark.parametrize("pos", PREFIX_MARKERS)
def test_bad_msgpack_marker(pos: int) -> None:
    bad = bytearray(SPEC_11_1_HEADER)
    bad[pos] ^= 0x01
    with pytest.raises(FormatError, match=rf"^frame header: .* at offset {pos} is"):
        FrameHeader.from_bytes(bytes(bad), buffer_len=467)


def test_file_with_bad_magic_is_refused(tmp_path) -> None:
    """A frame file whose magic is corrupted is not a frame (a buffer already is refused)."""
    import pyblosc2 as pb

    bad = bytearray(spec_11_1_frame())
    bad[2:10] = b"c2frame\x00"
    path = tmp_path / "bad.b2frame"
    path.write_bytes(bytes(bad))
    with pytest.raises(FormatError, match=r"magic at offset 2"):
        pb.open(str(path))
