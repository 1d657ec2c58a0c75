"""Picking the selected items out of one decoded block (ChunkReader.pick_items), reading only
the needed blocks of a stored chunk (ranged.with_blocks), and the NDArray selections that use
them: every dtype size, filter pipelines that allow picking and those that do not, memcpyed
and special chunks, the last partial chunk, negative steps."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.chunk.layout import ChunkLayout
from pyblosc2.chunk.ranged import stored_reader, with_blocks
from pyblosc2.constants import Codec, Filter
from pyblosc2.errors import FormatError, ParamError

BSHAPE = (4, 8, 16)  # items of one block
NBLOCKS = 3
DTYPES = ["u1", "<i2", "<f4", "<f8", "<c16"]
SHUFFLE = (0, 0, 0, 0, 0, Filter.SHUFFLE)
NOFILTER = (0,) * 6
BITSHUFFLE = (0, 0, 0, 0, 0, Filter.BITSHUFFLE)
INDEXES = [
    pytest.param((slice(0, 4, 1), slice(3, 4, 1), slice(0, 16, 1)), id="cross-row"),
    pytest.param((slice(1, 2, 1), slice(0, 8, 1), slice(0, 16, 1)), id="slab"),
    pytest.param((slice(0, 4, 3), slice(1, 8, 5), slice(2, 16, 7)), id="strided"),
    pytest.param((slice(2, 3, 1), slice(5, 6, 1), slice(9, 10, 1)), id="one-item"),
    pytest.param((slice(0, 4, 1), slice(0, 8, 1), slice(0, 16, 1)), id="whole-block"),
]


def _data(dtype: str) -> np.ndarray:
    n = NBLOCKS * int(np.prod(BSHAPE))
    x = np.linspace(0, 1000, n).astype(dtype)
    return x.reshape(NBLOCKS, *BSHAPE)


def _chunk(x: np.ndarray, filters: tuple[int, ...], clevel: int = 5) -> bytes:
    spec = EncodeSpec(
        x.itemsize,
        clevel,
        Codec.ZSTD,
        filters=filters,
        blocksize=int(np.prod(BSHAPE)) * x.itemsize,
    )
    return encode_chunk(memoryview(np.ascontiguousarray(x)).cast("B"), spec)


def _pick(r: ChunkReader, j: int, index: tuple[slice, ...], dtype: np.dtype) -> np.ndarray:
    sel = tuple(len(range(s.start, s.stop, s.step)) for s in index)
    out = np.full(sel, 7, dtype)
    r.pick_items(j, BSHAPE, index, out.view(np.uint8).reshape((*sel, dtype.itemsize)))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("filters", [SHUFFLE, NOFILTER], ids=["shuffle", "nofilter"])
@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("j", [0, NBLOCKS - 1])
def test_pick_items_matches_numpy(dtype, filters, index, j) -> None:
    x = _data(dtype)
    r = ChunkReader.open(_chunk(x, filters))
    assert r.can_pick_items(x.itemsize)
    np.testing.assert_array_equal(_pick(r, j, index, x.dtype), x[j][index])


@pytest.mark.parametrize(
    ("filters", "clevel", "itemsize", "want"),
    [
        pytest.param(SHUFFLE, 5, 8, True, id="shuffle"),
        pytest.param(NOFILTER, 5, 8, True, id="nofilter"),
        pytest.param(SHUFFLE, 5, 4, False, id="other-item-size"),
        pytest.param(BITSHUFFLE, 5, 8, False, id="bitshuffle"),
        pytest.param((0, 0, 0, 0, Filter.DELTA, Filter.SHUFFLE), 5, 8, False, id="delta"),
        pytest.param(SHUFFLE, 0, 8, False, id="memcpyed"),
    ],
)
def test_can_pick_items_only_for_shuffle_or_no_filter(filters, clevel, itemsize, want) -> None:
    r = ChunkReader.open(_chunk(_data("<f8"), filters, clevel))
    assert r.can_pick_items(itemsize) is want


def test_pick_items_refuses_a_pipeline_it_cannot_pick_from() -> None:
    x = _data("<f8")
    r = ChunkReader.open(_chunk(x, BITSHUFFLE))
    with pytest.raises(ParamError, match="cannot be picked"):
        _pick(r, 0, (slice(0, 1, 1),) * 3, x.dtype)


def test_pick_items_refuses_a_shape_other_than_the_block() -> None:
    x = _data("<f8")
    r = ChunkReader.open(_chunk(x, SHUFFLE))
    out = np.empty((1, 1, 1, 8), np.uint8)
    with pytest.raises(ParamError, match="holds"):
        r.pick_items(0, (2, 8, 16), (slice(0, 1, 1),) * 3, out)


def _stored(c: bytes) -> tuple[ChunkReader, list[tuple[int, int]]]:
    calls: list[tuple[int, int]] = []

    def fetch(p: int, n: int) -> bytes:
        calls.append((p, n))
        return c[p : p + n]

    lay = ChunkLayout.parse(ChunkHeader.from_bytes(c), fetch)
    return stored_reader(fetch, lay), calls


@pytest.mark.parametrize("check", [True, False])
def test_with_blocks_fetches_only_the_named_blocks(check) -> None:
    x = _data("<f4")
    c = _chunk(x, SHUFFLE)
    reader, calls = _stored(c)
    calls.clear()
    index = (slice(0, 4, 1), slice(2, 3, 1), slice(0, 16, 1))
    got = with_blocks(
        lambda p, n: calls.append((p, n)) or c[p : p + n],
        reader,
        [1],
        lambda b: _pick(b, 1, index, x.dtype),
        check,
    )
    np.testing.assert_array_equal(got, x[1][index])
    lo, hi = reader.layout.spans[1]
    assert calls == [(lo, hi - lo)]


@pytest.mark.parametrize("check", [True, False])
def test_corrupt_stream_header_raises_whether_checked_first_or_not(check) -> None:
    x = _data("<f4")
    c = bytearray(_chunk(x, SHUFFLE))
    reader, _ = _stored(bytes(c))
    start = reader.layout.spans[1][0]
    struct.pack_into("<i", c, start, len(c))  # a csize past the chunk's end
    with pytest.raises(FormatError, match="block 1 stream 0"):
        with_blocks(
            lambda p, n: bytes(c[p : p + n]),
            reader,
            [1],
            lambda b: _pick(b, 1, (slice(0, 1, 1),) * 3, x.dtype),
            check,
        )


def test_picking_a_block_that_was_not_read_is_refused() -> None:
    x = _data("<f4")
    c = _chunk(x, SHUFFLE)
    reader, _ = _stored(c)
    with pytest.raises(ParamError, match="not read"):
        with_blocks(
            lambda p, n: c[p : p + n],
            reader,
            [1],
            lambda b: _pick(b, 2, (slice(0, 1, 1),) * 3, x.dtype),
        )


def test_layout_spans_match_the_spans_computed_from_bstarts() -> None:
    c = _chunk(_data("<f8"), SHUFFLE)
    lay = ChunkLayout.parse(ChunkHeader.from_bytes(c), lambda p, n: c[p : p + n])
    for blocks in ([0], [2], [0, 2], [0, 1, 2]):
        assert lay.block_spans(blocks) == lay._computed_spans(blocks)


# -- NDArray selections through the pick path ---------------------------------------------
SHAPE = (13, 40, 33)  # last chunk partial on every axis
CHUNKS = (4, 16, 33)
BLOCKS = (2, 8, 11)
KEYS = [
    pytest.param((slice(None), 17, slice(None)), id="cross-section"),
    pytest.param((slice(None), slice(None), 5), id="column-plane"),
    pytest.param((slice(None, None, 5), slice(None, None, 13), slice(None, None, 7)), id="steps"),
    pytest.param((slice(None, None, -4), slice(30, 2, -9), 32), id="negative-steps"),
    pytest.param((12, slice(None), slice(None)), id="last-partial-slab"),
    pytest.param((12, 39, 32), id="last-point"),
]
CPARAMS = [
    pytest.param({}, id="shuffle"),
    pytest.param({"filters": [pb.Filter.NOFILTER]}, id="nofilter"),
    pytest.param({"filters": [pb.Filter.BITSHUFFLE]}, id="bitshuffle"),
    pytest.param({"filters": [pb.Filter.DELTA, pb.Filter.SHUFFLE]}, id="delta"),
    pytest.param({"clevel": 0}, id="memcpyed"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cparams", CPARAMS)
@pytest.mark.parametrize("key", KEYS)
def test_file_selections_match_numpy(tmp_path, dtype, cparams, key) -> None:
    x = np.linspace(-50, 50, int(np.prod(SHAPE))).astype(dtype).reshape(SHAPE)
    a = pb.asarray(
        x,
        chunks=CHUNKS,
        blocks=BLOCKS,
        cparams={"codec": pb.Codec.ZSTD, **cparams},
        urlpath=str(tmp_path / "x.b2nd"),
    )
    a = pb.open(str(tmp_path / "x.b2nd"))
    np.testing.assert_array_equal(a[key], x[key])


@pytest.mark.parametrize("key", KEYS)
def test_special_chunks_read_through_selections(tmp_path, key) -> None:
    a = pb.zeros(SHAPE, dtype="<f8", chunks=CHUNKS, blocks=BLOCKS, urlpath=str(tmp_path / "z"))
    a[4:8] = 1.5  # one row of chunks with data, the others special
    want = np.zeros(SHAPE)
    want[4:8] = 1.5
    np.testing.assert_array_equal(a[key], want[key])


def test_cross_section_decodes_only_the_blocks_holding_it(tmp_path, decoded_blocks) -> None:
    x = np.arange(8 * 32 * 16, dtype=np.float32).reshape(8, 32, 16)
    a = pb.asarray(x, chunks=(8, 32, 16), blocks=(2, 8, 16), urlpath=str(tmp_path / "c.b2nd"))
    decoded_blocks.clear()
    np.testing.assert_array_equal(a[:, 9, :], x[:, 9, :])
    # row 9 is in block row 1 of the (4, 4, 1) block grid
    assert sorted(decoded_blocks) == [1, 5, 9, 13]
