"""ndarray/b2nd_meta.py: the positional ``b2nd`` metalayer (frame-format.md §8.1, §11.2)."""

from __future__ import annotations

import ast
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2 import FormatError
from pyblosc2.ndarray.b2nd_meta import MAX_DIM, B2NDMeta

# §11.2: shape (5, 7), chunks (3, 4), blocks (2, 3), int16
SPEC_11_2 = bytes.fromhex(
    "970002"  # fixarray(7), version 0, ndim 2
    "92"
    "d30000000000000005"
    "d30000000000000007"  # shape, int64 BE
    "92"
    "d200000003"
    "d200000004"  # chunks, int32 BE
    "92"
    "d200000002"
    "d200000003"  # blocks
    "00"
    "db00000003"
    "3c6932"  # NumPy dtype format, str32 "<i2"
)
SPEC_11_2_META = B2NDMeta((5, 7), (3, 4), (2, 3), np.dtype("<i2"))
# §11.2: a 0-d float64 array
SPEC_0D = bytes.fromhex("97000090909000db000000033c6638")
END_OF_BLOCKS = 44  # where the legacy (dtype-less) layout of SPEC_11_2 ends


@pytest.mark.parametrize(
    ("raw", "meta"),
    [
        (SPEC_11_2, SPEC_11_2_META),
        (SPEC_0D, B2NDMeta((), (), (), np.dtype("<f8"))),
    ],
    ids=["2d-int16", "0d-float64"],
)
def test_spec_vectors(raw: bytes, meta: B2NDMeta) -> None:
    assert meta.to_bytes().hex() == raw.hex()
    assert B2NDMeta.from_bytes(raw, typesize=meta.dtype.itemsize) == meta


@pytest.mark.parametrize("ndim", [0, 1, 3, 8, 16])
@pytest.mark.parametrize("dtype", ["<i2", "|u1", "<c16", "|S300", "[('a', '<i4'), ('b', '<f8')]"])
def test_length_and_markers(ndim: int, dtype: str) -> None:
    """§8.1: 12 + 19·ndim + len(dtype) bytes; for 16 dims C writes the (invalid) marker A0."""
    dt = np.dtype(ast.literal_eval(dtype) if dtype.startswith("[") else dtype)
    m = B2NDMeta((4,) * ndim, (2,) * ndim, (1,) * ndim, dt)
    raw = m.to_bytes()
    stored = str(dt) if dt.kind == "V" else dt.str
    assert len(raw) == 12 + 19 * ndim + len(stored)
    assert raw[3] == raw[4 + 9 * ndim] == raw[5 + 14 * ndim] == 0x90 + ndim
    assert B2NDMeta.from_bytes(raw, typesize=dt.itemsize) == m


def test_legacy_layout_without_dtype() -> None:
    """§8.1: bytes ending right after the blockshape mean a caterva array: dtype S<typesize>."""
    m = B2NDMeta.from_bytes(SPEC_11_2[:END_OF_BLOCKS], typesize=6)
    assert (m.shape, m.chunks, m.blocks, m.dtype) == ((5, 7), (3, 4), (2, 3), np.dtype("S6"))


@pytest.mark.parametrize(
    ("pos", "value"), [(1, 7), (3, 0x91), (4, 0xCF), (22, 0x00), (33, 0x00), (39, 0x00)]
)
def test_markers_are_skipped_not_checked(pos: int, value: int) -> None:
    """§8.1: C skips the markers before each field (only DB is checked); version neither."""
    bad = bytearray(SPEC_11_2)
    bad[pos] = value
    assert B2NDMeta.from_bytes(bytes(bad), typesize=2) == SPEC_11_2_META


# -- round trips ------------------------------------------------------------------------------

DTYPES = st.sampled_from(["<i1", "<u2", "<i4", "<f4", ">f8", "<c8", "|b1", "<U3", "|S5", "<M8[s]"])


@st.composite
def metas(draw: st.DrawFn) -> B2NDMeta:
    ndim = draw(st.integers(0, MAX_DIM))
    shape, chunks, blocks = [], [], []
    for _ in range(ndim):
        shape.append(draw(st.integers(0, 2**63 - 1)))
        c = draw(st.integers(1, 2**31 - 1))
        chunks.append(c)
        blocks.append(draw(st.integers(1, c)))
    return B2NDMeta(tuple(shape), tuple(chunks), tuple(blocks), np.dtype(draw(DTYPES)))


@given(metas())
def test_roundtrip(m: B2NDMeta) -> None:
    assert B2NDMeta.from_bytes(m.to_bytes(), typesize=m.dtype.itemsize) == m


# -- malformed metalayers ---------------------------------------------------------------------


def _cut_message(cut: int) -> str:
    if cut < 3:
        return rf"length at offset 0 is {cut}, expected at least 3 bytes"
    if cut < END_OF_BLOCKS:
        return rf"length at offset 0 is {cut}, expected at least 44 bytes for ndim 2"
    if cut < END_OF_BLOCKS + 6:
        return r"dtype marker at offset 45 is missing, expected 0xdb"
    return rf"dtype length at offset 46 is 3, expected at most {cut - 50}"


@pytest.mark.parametrize("cut", [c for c in range(len(SPEC_11_2)) if c != END_OF_BLOCKS])
def test_truncated_at_every_offset(cut: int) -> None:
    with pytest.raises(FormatError, match=f"^b2nd metalayer: {_cut_message(cut)}"):
        B2NDMeta.from_bytes(SPEC_11_2[:cut], typesize=2)


def _with(fmt: str, pos: int, value: int) -> bytes:
    bad = bytearray(SPEC_11_2)
    struct.pack_into(fmt, bad, pos, value)
    return bytes(bad)


# (struct format, position, bad value, message regex)
BAD_FIELDS = [
    (">B", 2, 17, r"ndim at offset 2 is 17, expected at most 16"),
    (">B", 2, 255, r"ndim at offset 2 is 255"),
    (">B", 2, 3, r"length at offset 0 is 53, expected at least 63 bytes for ndim 3"),
    (">q", 5, -1, r"shape/chunks/blocks\[0\] is \(-1, 3, 2\), expected >= 0"),
    (">i", 24, -1, r"shape/chunks/blocks\[0\] is \(5, -1, 2\), expected >= 0"),
    (">i", 40, -1, r"shape/chunks/blocks\[1\] is \(7, 4, -1\), expected >= 0"),
    (">i", 24, 0, r"chunks/blocks\[0\] is \(0, 2\), expected 0 < blocks <= chunks"),
    (">i", 35, 0, r"chunks/blocks\[0\] is \(3, 0\), expected 0 < blocks <= chunks"),
    (">i", 35, 4, r"chunks/blocks\[0\] is \(3, 4\), expected 0 < blocks <= chunks"),
    (">i", 35, 2**31 - 1, r"chunks/blocks\[0\] is \(3, 2147483647\)"),
    (">B", 45, 0xD9, r"dtype marker at offset 45 is missing, expected 0xdb \(str32\)"),
    (">I", 46, 4, r"dtype length at offset 46 is 4, expected at most 3"),
    (">I", 46, 2**32 - 1, r"dtype length at offset 46 is 4294967295"),
    (">B", 50, ord("?"), r"dtype is '\?i2' \("),
]


@pytest.mark.parametrize(
    ("fmt", "pos", "value", "message"), BAD_FIELDS, ids=[f"{p}={v}" for _, p, v, _ in BAD_FIELDS]
)
def test_bad_field(fmt: str, pos: int, value: int, message: str) -> None:
    with pytest.raises(FormatError, match=f"^b2nd metalayer: {message}"):
        B2NDMeta.from_bytes(_with(fmt, pos, value), typesize=2)


def test_empty_dimension_allows_zero_chunks() -> None:
    """C only rejects a zero chunk/block extent on a non-empty dimension."""
    m = B2NDMeta((0, 7), (0, 4), (0, 3), np.dtype("<i2"))
    assert B2NDMeta.from_bytes(m.to_bytes(), typesize=2) == m


def test_non_numpy_dtype_format() -> None:
    with pytest.raises(NotImplementedError, match=r"b2nd dtype format 1 \(only NumPy dtypes\)"):
        B2NDMeta.from_bytes(_with(">B", 44, 1), typesize=2)
