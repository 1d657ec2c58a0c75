"""The parts of a proxy: its bitmaps (proxies/bitmap.py), the cells a key touches
(proxies/cells.py), partly fetched chunks (proxies/splice.py)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.errors import FormatError
from pyblosc2.proxies.bitmap import FetchedMap
from pyblosc2.proxies.cells import key_dims, wanted_cells
from pyblosc2.proxies.splice import chunk_payloads, needs_block0, splice_chunk


# -- bitmaps -------------------------------------------------------------------------------------
def test_bits_are_laid_out_as_python_blosc2s() -> None:
    """Bit n is bit n % 8 of byte n // 8 (python-blosc2's ``_mark_fetched``)."""
    m = FetchedMap(5, 3)
    m.mark(0, [2])
    m.mark(4)
    assert m.to_bytes() == bytes([0b0000_0100, 0b0111_0000])  # bits 2 and 12..14 of 15
    assert m.key == "proxy-fetched-blocks" and FetchedMap(5, 1).key == "proxy-fetched"
    assert m.partly_filled() == [0] and m.held(4) == [0, 1, 2] and m.missing(0) == [0, 1]


@given(st.integers(1, 40), st.integers(1, 9), st.data())
def test_bits_round_trip(nchunks: int, bpc: int, data: Any) -> None:
    m = FetchedMap(nchunks, bpc)
    m.bits[...] = np.array(
        data.draw(st.lists(st.booleans(), min_size=nchunks * bpc, max_size=nchunks * bpc))
    ).reshape(nchunks, bpc)
    back = FetchedMap(nchunks, bpc)
    back.load({m.key: m.to_bytes()}, None)
    np.testing.assert_array_equal(back.bits, m.bits)


def test_a_chunk_bitmap_is_promoted_to_blocks() -> None:
    m = FetchedMap(10, 4)
    m.load({"proxy-fetched": bytes([0b101, 0])}, None)
    assert m.complete(0) and not m.complete(1) and m.complete(2) and not m.bits[3:].any()


def test_a_cache_without_bitmap_holds_its_stored_chunks() -> None:
    m = FetchedMap(4, 1)
    m.load({}, np.array([True, False, True, False]))  # True: special (not stored)
    assert m.bits[:, 0].tolist() == [False, True, False, True]
    blocks = FetchedMap(4, 3)
    blocks.load({}, np.array([False] * 4))
    assert not blocks.bits.any()  # blocks: a stored chunk may hold only some of them


@pytest.mark.parametrize("value", [b"\x01", b"\x00" * 3, "abc", 7, [1, 2]], ids=repr)
def test_a_damaged_bitmap_is_refused(value: Any) -> None:
    with pytest.raises(FormatError, match="proxy-fetched"):
        FetchedMap(12, 1).load({"proxy-fetched": value}, None)


# -- cells ---------------------------------------------------------------------------------------
def _exact(
    shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...], key: Any
) -> set:
    """(chunk, block) of every item ``key`` selects, by enumeration."""
    grid = [-(-s // c) for s, c in zip(shape, chunks, strict=True)]
    inner = [-(-c // b) for c, b in zip(chunks, blocks, strict=True)]
    coords = np.indices(shape).reshape(len(shape), *shape)
    picked = [np.asarray(c[key]).reshape(-1) for c in coords]
    out = set()
    for point in zip(*picked, strict=True):
        chunk = np.ravel_multi_index([p // c for p, c in zip(point, chunks, strict=True)], grid)
        block = np.ravel_multi_index(
            [(p % c) // b for p, c, b in zip(point, chunks, blocks, strict=True)], inner
        )
        out.add((int(chunk), int(block)))
    return out


def _cells(shape: Any, chunks: Any, blocks: Any, key: Any) -> set:
    dims = key_dims(key, shape)
    assert dims is not None
    inner = int(np.prod([-(-c // b) for c, b in zip(chunks, blocks, strict=True)]))
    got = wanted_cells(dims, shape, chunks, blocks)
    return {(n, b) for n, bs in got.items() for b in (range(inner) if bs is None else bs)}


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_the_cells_of_a_key_are_the_cells_of_what_it_selects(data: Any) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    blocks = tuple(data.draw(st.integers(1, c)) for c in chunks)
    key = tuple(
        data.draw(
            st.one_of(
                st.integers(-n, n - 1),
                st.builds(
                    slice,
                    st.none() | st.integers(-n, n),
                    st.none() | st.integers(-n, n),
                    st.sampled_from([None, 1, 2, -1, -3]),
                ),
                st.lists(st.integers(-n, n - 1), min_size=1, max_size=4),
            )
        )
        for n in shape
    )
    lists = sum(isinstance(k, list) for k in key)
    exact = _exact(shape, chunks, blocks, key) if lists <= 1 else None
    got = _cells(shape, chunks, blocks, key)
    if exact is not None:
        assert got == exact
    else:  # several lists pair up in numpy; crossing them is a superset
        crossed = tuple(
            np.ix_(*[np.atleast_1d(np.arange(n)[k]) for k, n in zip(key, shape, strict=True)])
        )
        assert got >= _exact(shape, chunks, blocks, crossed)


def test_a_boolean_mask_and_an_ellipsis_are_placed() -> None:
    shape, chunks, blocks = (10, 10), (5, 5), (2, 5)
    mask = np.zeros((10, 10), bool)
    mask[7, 2] = True
    assert _cells(shape, chunks, blocks, mask) == _exact(shape, chunks, blocks, mask)
    assert _cells(shape, chunks, blocks, (Ellipsis, 3)) == _exact(
        shape, chunks, blocks, (Ellipsis, 3)
    )
    assert key_dims((0, 0, 0), (2, 2)) is None  # too many indices: every chunk


# -- splicing ------------------------------------------------------------------------------------
def _chunk(
    n: int = 256, typesize: int = 4, blocksize: int = 128, **kw: Any
) -> tuple[np.ndarray, bytes]:
    x = np.random.default_rng(0).integers(0, 1000, n).astype(f"i{typesize}")
    return x, blosc2.compress2(x, typesize=typesize, blocksize=blocksize, **kw)


@pytest.mark.parametrize("held", [[], [0], [1, 3], [0, 1, 2, 3, 4, 5, 6, 7]], ids=str)
def test_a_spliced_chunk_holds_its_blocks_and_zeros(held: list[int], cblosc2: Any) -> None:
    x, c = _chunk()
    spliced = splice_chunk(c[:32], chunk_payloads(c, held))
    want = np.zeros_like(x)
    for j in held:
        want[j * 32 : (j + 1) * 32] = x[j * 32 : (j + 1) * 32]
    for decode in (blosc2.decompress2, cblosc2.decompress2):  # ours and C-Blosc2
        np.testing.assert_array_equal(np.frombuffer(decode(spliced), x.dtype), want)


def test_a_split_chunk_splices_one_stream_per_byte() -> None:
    x, c = _chunk(splitmode=blosc2.SplitMode.ALWAYS_SPLIT)
    spliced = splice_chunk(c[:32], chunk_payloads(c, [2]))
    got = np.frombuffer(blosc2.decompress2(spliced), x.dtype)
    np.testing.assert_array_equal(got[64:96], x[64:96])
    assert not got[:64].any()


def test_delta_needs_block0() -> None:
    _, c = _chunk(filters=[blosc2.Filter.DELTA], filters_meta=[0])
    assert needs_block0(ChunkHeader.from_bytes(c))
    assert not needs_block0(ChunkHeader.from_bytes(_chunk()[1]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: _chunk(clevel=0)[1],
        lambda: _chunk(blocksize=1024)[1],
        lambda: bytes(_chunk()[1][:40]),
    ],
    ids=["memcpyed", "one-block", "truncated"],
)
def test_a_chunk_that_cannot_be_taken_apart_is_refused(make: Any) -> None:
    with pytest.raises(FormatError):
        chunk_payloads(make(), [0])


def test_a_block_outside_the_chunk_is_refused() -> None:
    _, c = _chunk()
    with pytest.raises(FormatError, match="block"):
        splice_chunk(c[:32], {8: b"\0\0\0\0"})


def test_every_subset_of_blocks_decodes() -> None:
    x, c = _chunk(n=128, blocksize=64)  # 2 blocks
    for r in range(3):
        for held in itertools.combinations(range(2), r):
            got = np.frombuffer(
                blosc2.decompress2(splice_chunk(c[:32], chunk_payloads(c, held))), x.dtype
            )
            for j in range(2):
                part = got[j * 16 : (j + 1) * 16]
                assert (part == x[j * 16 : (j + 1) * 16]).all() if j in held else not part.any()
