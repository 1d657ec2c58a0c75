"""Writing VL-block chunks (spec §12, chunk/vlencode.py) and reading them block by block
(chunk/vlblocks.py, blosc2_ext.py), without a reference library (interop is in
tests/interop/test_vlchunks.py)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.blosc2_ext import vlcompress, vldecompress, vldecompress_block
from tests.helpers import make_data

C = pb.Codec
F = pb.Filter

V20 = bytes.fromhex(
    "060135017e000000040000008a000000000000000001010000000000000001003000000048000000"
    "570000008300000021000000bd68656c6c6f20776f726c640b0050776f726c64320000001f000100"
    "1950000000000028000000000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c"
    "1d1e1f202122232425262703000000616263"
)
V20_BLOCKS = [b"hello world" * 3, b"\x00" * 50, bytes(range(40)), b"abc"]


def test_vector_v20() -> None:
    """chunk-format.md §17 V20, written by C-Blosc2: the same bytes."""
    assert vlcompress(V20_BLOCKS, codec=C.LZ4, clevel=5, typesize=1, nthreads=1) == V20
    assert vldecompress(V20) == V20_BLOCKS
    assert pb.decompress2(V20) == b"".join(V20_BLOCKS)


blocks_st = st.lists(st.binary(min_size=1, max_size=3000), min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(
    blocks=blocks_st,
    codec=st.sampled_from([C.BLOSCLZ, C.LZ4, C.LZ4HC, C.ZLIB, C.ZSTD]),
    clevel=st.integers(0, 9),
    typesize=st.sampled_from([1, 2, 4, 8, 3]),
    filters=st.sampled_from([[], [F.SHUFFLE], [F.BITSHUFFLE], [F.DELTA, F.SHUFFLE], [F.BYTEDELTA]]),
    nthreads=st.sampled_from([1, 3]),
)
def test_roundtrip(blocks, codec, clevel, typesize, filters, nthreads) -> None:
    chunk = vlcompress(blocks, codec=codec, clevel=clevel, typesize=typesize, filters=filters,
                       nthreads=nthreads)  # fmt: skip
    assert vldecompress(chunk, nthreads=nthreads) == blocks
    for j in (0, len(blocks) - 1):
        assert vldecompress_block(chunk, j) == blocks[j]
    assert pb.decompress2(chunk) == b"".join(blocks)
    h = pb.get_chunk_header(chunk)
    assert (h.version, h.blocksize, h.nbytes, h.blosc2_flags2) == (
        6, len(blocks), sum(map(len, blocks)), 1,
    )  # fmt: skip
    single = vlcompress(blocks, codec=codec, clevel=clevel, typesize=typesize, filters=filters,
                        nthreads=1)  # fmt: skip
    assert chunk == single  # the bytes do not depend on the thread count


def test_layout() -> None:
    """§12: strictly increasing bstarts, each block's own size first, raw blocks kept raw."""
    blocks = [make_data("text", 5000), make_data("random", 700), b"x"]
    chunk = vlcompress(blocks, codec=C.ZSTD, typesize=1, nthreads=1)
    h = pb.get_chunk_header(chunk)
    assert chunk[2] & 0x10 and not chunk[2] & 0x02  # never split, never memcpyed
    starts = struct.unpack_from("<3i", chunk, 32)
    assert list(starts) == sorted(starts) and starts[0] == 32 + 12
    ends = [*starts[1:], h.cbytes]
    for blk, start in zip(blocks, starts, strict=True):
        assert struct.unpack_from("<i", chunk, start)[0] == len(blk)
    assert chunk[starts[1] + 4 : ends[1]] == blocks[1]  # incompressible: stored as is
    assert ends[2] - starts[2] == 5


def test_dictionary_needs_eight_blocks() -> None:
    few = [make_data("text", 4000, seed=i) for i in range(7)]
    many = [make_data("text", 4000, seed=i) for i in range(12)]
    for blocks, expect_dict in ((few, False), (many, True)):
        for codec in (C.ZSTD, C.LZ4, C.LZ4HC):
            chunk = vlcompress(blocks, codec=codec, use_dict=True, typesize=1, nthreads=1)
            assert pb.get_chunk_header(chunk).use_dict is expect_dict
            assert vldecompress(chunk) == blocks


@pytest.mark.parametrize(
    ("blocks", "error"),
    [([], pb.ParamError), ([b"a", b""], pb.ParamError), (b"abc", TypeError), ("abc", TypeError)],
)
def test_bad_blocks(blocks, error) -> None:
    with pytest.raises(error):
        vlcompress(blocks, typesize=1)


def test_use_dict_needs_a_dictionary_codec() -> None:
    with pytest.raises(pb.ParamError, match="use_dict"):
        vlcompress([b"abc"] * 10, codec=C.BLOSCLZ, use_dict=True, typesize=1)


def test_not_a_vl_chunk() -> None:
    regular = pb.compress2(bytes(1000), typesize=1)
    with pytest.raises(pb.FormatError, match="VL-blocks"):
        vldecompress(regular)
    with pytest.raises(pb.FormatError, match="VL-blocks"):
        vldecompress_block(regular, 0)


def test_block_index_out_of_range() -> None:
    chunk = vlcompress([b"ab", b"cd"], typesize=1)
    with pytest.raises(IndexError):
        vldecompress_block(chunk, 2)
    with pytest.raises(pb.ParamError):
        vldecompress_block(chunk, -1)


@pytest.mark.parametrize("cut", [40, 60, 100])
def test_truncated_chunks_are_format_errors(cut: int) -> None:
    chunk = vlcompress([make_data("text", 300, seed=i) for i in range(4)], typesize=1)
    with pytest.raises(pb.FormatError):
        vldecompress(chunk[:cut])


def test_get_vlblock_in_an_schunk(tmp_path) -> None:
    path = str(tmp_path / "vl.b2frame")
    s = pb.SChunk(chunksize=-1, urlpath=path, mode="w", cparams={"typesize": 1})
    s.append_chunk(vlcompress([b"one", b"two", b"three"], typesize=1))
    s.append_chunk(vlcompress([b"four"], typesize=1))
    reopened = pb.open(path)
    assert reopened.get_vlblock(0, 2) == b"three"
    assert reopened.get_vlblock(-1, 0) == b"four"
    assert reopened.decompress_chunk(0) == b"onetwothree"
    plain = pb.SChunk(chunksize=100, data=np.arange(25, dtype=np.int32))
    with pytest.raises(pb.ParamError, match="not a VL-block chunk"):
        plain.get_vlblock(0, 0)
