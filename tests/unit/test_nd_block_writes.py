"""NDArray writes into a chunk the same handle wrote last compress only the blocks they touch
(ndarray/ndarray._Written, chunk/reencode.py): the stored chunks are the bytes a whole-chunk
compression gives, and anything else (another handle's write, other parameters) takes the
whole-chunk path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.chunk import encode, reencode

ROWS = 100  # rows per block; 4 blocks per chunk


def _array(path: Path | None = None, **kw) -> pb.NDArray:
    return pb.zeros(
        (0, 8), dtype=np.int64, chunks=(4 * ROWS, 8), blocks=(ROWS, 8),
        urlpath=None if path is None else str(path), mode="w", **kw,
    )  # fmt: skip


def _grow(a: pb.NDArray, batches: int, first: int = 0) -> None:
    for i in range(first, first + batches):
        n = a.shape[0]
        a.resize((n + ROWS, 8))
        a[n : n + ROWS, :] = np.arange(ROWS * 8).reshape(ROWS, 8) * (i + 1)


def _chunks(a: pb.NDArray) -> list[bytes]:
    return [bytes(a.schunk.get_chunk(k)) for k in range(a.schunk.nchunks)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many whole chunks and how many changed blocks were compressed."""
    seen = {"whole": 0, "blocks": 0}
    whole, blocks = encode.encode_chunk, reencode.encode_changed_blocks

    def one_whole(*args):  # type: ignore[no-untyped-def]
        seen["whole"] += 1
        return whole(*args)

    def some_blocks(previous, spec, changed):  # type: ignore[no-untyped-def]
        got = blocks(previous, spec, changed)
        seen["blocks"] += len(changed) if got is not None else 0
        return got

    monkeypatch.setattr("pyblosc2.schunk.schunk.encode_chunk", one_whole)
    monkeypatch.setattr("pyblosc2.ndarray.ndarray.encode_changed_blocks", some_blocks)
    return seen


def test_a_growing_array_compresses_one_block_per_batch(counted) -> None:
    a = _array()
    _grow(a, 8)
    # per chunk: the first batch compresses it whole (it was a zero chunk), the other three
    # compress their block only
    assert counted == {"whole": 2, "blocks": 6}
    b = _array()
    for k in range(8):  # the same rows, written with a new handle each time: all whole
        b = pb.ndarray_from_cframe(b.to_cframe())
        _grow(b, 1, first=k)
    assert _chunks(a) == _chunks(b)
    np.testing.assert_array_equal(a[...], b[...])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(1, 3 * ROWS)), min_size=1, max_size=6))
def test_any_writes_give_the_bytes_of_whole_chunk_compression(writes) -> None:
    """Writes of any rows (whole blocks or not) into a growing array: the same chunks and
    items as an array whose every write compresses whole chunks."""
    a, b = _array(), _array()
    _grow(a, 8)
    _grow(b, 8)
    for start, count in writes:
        lo = start * ROWS // 2
        value = np.full((min(count, 8 * ROWS - lo), 8), lo + count, np.int64)
        a[lo : lo + len(value)] = value
        b = pb.ndarray_from_cframe(b.to_cframe())  # a new handle: no block kept
        b[lo : lo + len(value)] = value
    assert _chunks(a) == _chunks(b)
    np.testing.assert_array_equal(a[...], b[...])


def test_another_handles_write_is_not_taken_for_ours(tmp_path: Path, counted) -> None:
    path = tmp_path / "a.b2nd"
    a = _array(path)
    _grow(a, 1)
    other = pb.open(str(path), mode="a")
    other[0:ROWS] = -1  # rewrites chunk 0 (as a whole: other wrote nothing before)
    a.refresh()  # (an unlocked writer must see the other write first)
    a.resize((2 * ROWS, 8))
    counted.update(whole=0, blocks=0)
    a[ROWS : 2 * ROWS] = 7  # chunk 0 is not the bytes a wrote last: compressed whole
    assert counted == {"whole": 1, "blocks": 0}
    got = pb.open(str(path))[: 2 * ROWS]
    assert (got[:ROWS] == -1).all() and (got[ROWS:] == 7).all()


def test_other_parameters_compress_whole_chunks(counted) -> None:
    a = _array(cparams={"codec": pb.Codec.LZ4, "clevel": 5})
    _grow(a, 2)
    assert counted["blocks"] == 1
    a.schunk.cparams = pb.CParams(codec=pb.Codec.ZSTD, clevel=5, typesize=8)
    counted.update(whole=0, blocks=0)
    a[2 * ROWS // 2 : 3 * ROWS // 2] = 3  # (the blocks the array's cparams change)
    assert counted == {"whole": 1, "blocks": 0}
