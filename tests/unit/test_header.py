"""chunk/header.py: layout round trips and the header rules of spec §2, §3, §15.1."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2 import FormatError
from pyblosc2.chunk.header import ChunkHeader

V1 = bytes.fromhex("05013504400000004000000048000000000000000001010000000000000000")
V1 += b"\x00"


def _with(buf: bytes, fmt: str, offset: int, value: int) -> bytes:
    b = bytearray(buf)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


@given(
    st.integers(0, 255),
    st.integers(0, 255),
    st.integers(0, 255).filter(lambda f: f & 5 == 5),
    st.integers(1, 255),
    st.integers(0, 2**31 - 33),
    st.integers(1, 536_866_816),
    st.lists(st.integers(0, 255), min_size=6, max_size=6),
    st.lists(st.integers(0, 255), min_size=6, max_size=6),
)
def test_extended_roundtrip(version, versionlz, flags, ts, nbytes, bs, filters, metas) -> None:
    if version == 3:
        filters[5] = metas[5] = 0
    h = ChunkHeader(
        version if version <= 6 else 5,
        versionlz,
        flags,
        ts,
        nbytes,
        bs,
        100,
        tuple(filters),
        1,
        0,
        tuple(metas),
        0,
        0,
        extended=True,
    )
    assert ChunkHeader.from_bytes(h.to_bytes()) == h


def test_v1_fields() -> None:
    h = ChunkHeader.from_bytes(V1)
    assert (h.version, h.typesize, h.nbytes, h.blocksize, h.cbytes) == (5, 4, 64, 64, 72)
    assert h.extended and h.header_len == 32 and h.dont_split and h.compformat == 1
    assert h.pipeline[5] == (1, 0) and h.nblocks == 1 and h.leftover == 0


@pytest.mark.parametrize(
    ("flags", "slot4", "slot5"),
    [
        (0x01, (0, 0), (1, 0)),
        (0x04, (0, 0), (2, 0)),
        (0x09, (3, 0), (1, 0)),
        (0x00, (0, 0), (0, 0)),
    ],
)
def test_blosc1_flags_to_pipeline(flags, slot4, slot5) -> None:
    h = ChunkHeader.from_bytes(struct.pack("<BBBBiii", 2, 1, flags, 4, 64, 64, 80))
    assert not h.extended and h.header_len == 16
    assert h.pipeline[4] == slot4 and h.pipeline[5] == slot5


def test_alpha_version_clears_slot5() -> None:
    b = bytearray(V1)
    b[0] = 3
    b[29] = 9
    h = ChunkHeader.from_bytes(bytes(b))
    assert h.filters[5] == 0 and h.filters_meta[5] == 0


def test_blocksize_clamped_to_nbytes() -> None:
    h = ChunkHeader.from_bytes(_with(V1, "<i", 8, 1000))
    assert h.blocksize == 1000 and h.effective_blocksize == 64 and h.nblocks == 1


@pytest.mark.parametrize(
    ("offset", "value", "field"),
    [
        (4, -1, "nbytes"),
        (8, 0, "blocksize"),
        (8, -5, "blocksize"),
        (8, 536_866_817, "blocksize"),
        (12, 15, "cbytes"),
        (12, 20, "cbytes"),
    ],
)
def test_bad_size_fields(offset, value, field) -> None:
    with pytest.raises(FormatError, match=f"{field} at offset {offset}"):
        ChunkHeader.from_bytes(_with(V1, "<i", offset, value))


def test_zero_typesize() -> None:
    with pytest.raises(FormatError, match="typesize at offset 3"):
        ChunkHeader.from_bytes(_with(V1, "<B", 3, 0))


@pytest.mark.parametrize("n", [0, 1, 15, 16, 31])
def test_short_buffers(n) -> None:
    with pytest.raises(FormatError, match="length"):
        ChunkHeader.from_bytes(V1[:n])


def test_unknown_version_with_flags2_bits() -> None:
    b = bytearray(V1)
    b[0], b[30] = 7, 0x02
    with pytest.raises(FormatError, match="blosc2_flags2"):
        ChunkHeader.from_bytes(bytes(b))


def test_vl_with_special_is_rejected() -> None:
    b = bytearray(V1)
    b[30], b[31] = 0x01, 0x10
    with pytest.raises(FormatError, match="blosc2_flags"):
        ChunkHeader.from_bytes(bytes(b))


@pytest.mark.parametrize(
    ("cbytes", "nbytes", "ok"),
    [(36, 64, True), (35, 64, False), (32, 64, False), (32 + 128, 64, False)],
)
def test_value_special_size_rules(cbytes, nbytes, ok) -> None:
    b = bytearray(_with(_with(V1, "<i", 12, cbytes), "<i", 4, nbytes))
    b[31] = 0x30
    if ok:
        assert ChunkHeader.from_bytes(bytes(b)).special == 3
    else:
        with pytest.raises(FormatError, match="cbytes"):
            ChunkHeader.from_bytes(bytes(b))


def _outcome(parse, buf: bytes, offset: int) -> object:
    try:
        h = parse(buf, offset)
        return h, h.nblocks, h.leftover, h.effective_blocksize
    except FormatError as exc:
        return ("error", str(exc))


# each field of a valid header, the edges of its rules: a case changes up to three of them
_EDGES = {
    0: [2, 3, 4, 5, 6, 7, 255],  # version
    2: [0x00, 0x01, 0x04, 0x05, 0x07, 0x15, 0x35, 0xA5],  # flags
    3: [0, 1, 8, 255],  # typesize
    4: [-1, 0, 1, 63, 2**31 - 33, 2**31 - 32, 2**31 - 1],  # nbytes
    8: [-1, 0, 1, 64, 536_866_816, 536_866_817],  # blocksize
    12: [-1, 15, 16, 31, 32, 33, 36, 40, 160],  # cbytes
    30: [0, 1, 2, 0x80],  # blosc2_flags2
    31: [0, 0x01, 0x08, 0x10, 0x20, 0x30, 0x40, 0x50, 0x70],  # blosc2_flags
}
_FORMATS = {4: "<i", 8: "<i", 12: "<i"}


@given(
    st.lists(
        st.sampled_from(sorted(_EDGES)).flatmap(
            lambda k: st.tuples(st.just(k), st.sampled_from(_EDGES[k]))
        ),
        max_size=3,
    ),
    st.integers(0, 3),
    st.integers(0, 40),
)
def test_common_case_parse_matches_the_field_by_field_checks(changes, pre, cut) -> None:
    """from_bytes' one-test path for the common header gives what the checks of every field
    give: the same header, or the same error, on headers at the edges of every rule."""
    b = bytearray(V1)
    for off, value in changes:
        struct.pack_into(_FORMATS.get(off, "<B"), b, off, value)
    buf = b"\x00" * pre + bytes(b)
    buf = buf[: len(buf) - cut] if cut <= 16 else buf  # cut 0 or > 16: whole
    assert _outcome(ChunkHeader.from_bytes, buf, pre) == _outcome(ChunkHeader._checked, buf, pre)


@pytest.mark.parametrize(("off", "value"), [(k, v) for k in sorted(_EDGES) for v in _EDGES[k]])
def test_common_case_parse_matches_at_each_edge(off, value) -> None:
    """Each edge of each rule alone, on a valid header: the same header or the same error."""
    b = bytearray(V1)
    struct.pack_into(_FORMATS.get(off, "<B"), b, off, value)
    buf = bytes(b)
    assert _outcome(ChunkHeader.from_bytes, buf, 0) == _outcome(ChunkHeader._checked, buf, 0)
