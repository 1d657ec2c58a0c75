"""A frame read by byte ranges as a proxy source (pyblosc2/proxies/byterange.py and
frameranges.py): what it reads, and what it refuses."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.errors import FormatError, NotAFrameError
from pyblosc2.proxies import byterange


class Bytes(blosc2.ByteRangeNDSource):
    """A frame held in memory, read by ranges (every read recorded)."""

    def __init__(self, frame: bytes, **kw: Any) -> None:
        self.frame, self.reads = bytes(frame), []
        super().__init__("mem://frame", **kw)

    def read_range(self, offset: int, size: int) -> bytes:
        self.reads.append((offset, size))
        return self.frame[offset : offset + size]


def _big(
    shape: tuple[int, ...] = (200, 200), chunks: Any = (100, 200), blocks: Any = (10, 20)
) -> tuple[np.ndarray, bytes]:
    x = np.random.default_rng(0).random(shape)
    return x, blosc2.asarray(x, chunks=chunks, blocks=blocks).to_cframe()


def test_an_open_reads_the_head_once_and_the_offsets_on_first_use() -> None:
    x, frame = _big()
    src = Bytes(frame)
    assert src.reads == [(0, byterange._FRAME_PREFETCH)]
    assert (src.shape, src.chunks, src.blocks, src.dtype) == (
        (200, 200),
        (100, 200),
        (10, 20),
        x.dtype,
    )
    assert src.blocks_per_chunk == 100
    assert len(src._offsets) == 2 and len(src.reads) == 2
    assert len(src._offsets) == 2 and len(src.reads) == 2  # kept


def test_a_small_frame_is_read_in_one_request() -> None:
    a = blosc2.arange(0, 100, dtype="i4", chunks=(10,))
    src = Bytes(a.to_cframe(), max_concurrency=1)
    np.testing.assert_array_equal(blosc2.Proxy(src)[:], a[:])
    assert src.reads[0] == (0, byterange._FRAME_PREFETCH) and len(src.reads) == 1 + 10


def test_whole_chunks_below_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    x, frame = _big()
    src = Bytes(frame)
    p = blosc2.Proxy(src)
    src.reads.clear()
    np.testing.assert_array_equal(p[3:5, 7:9], x[3:5, 7:9])
    assert len(src.reads) == 2  # the offsets, then chunk 0 whole (160 kB < 1 MiB)


def test_blocks_above_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(byterange, "BLOCK_MIN_CBYTES", 0)
    x, frame = _big()
    src = Bytes(frame)
    p = blosc2.Proxy(src)
    src.reads.clear()
    np.testing.assert_array_equal(p[3:5, 7:9], x[3:5, 7:9])
    # the offsets, chunk 0's block starts, the one block the key lands in
    assert len(src.reads) == 3 and src.reads[2][1] < 2000
    np.testing.assert_array_equal(p[...], x)
    np.testing.assert_array_equal(p.fetch()[...], x)


def test_the_proxy_blocks_of_a_delta_chunk_include_block0(monkeypatch: pytest.MonkeyPatch) -> None:
    """DELTA decodes every block against block 0 (chunk-format §9.3): a partly fetched chunk
    of it must hold block 0 too (python-blosc2 4.14.1 does not fetch it, and reads such a
    chunk wrong)."""
    monkeypatch.setattr(byterange, "BLOCK_MIN_CBYTES", 0)
    x = np.arange(40_000, dtype=np.int64).reshape(200, 200) * 3
    a = blosc2.asarray(
        x, chunks=(100, 200), blocks=(10, 200), cparams={"filters": [blosc2.Filter.DELTA]}
    )
    p = blosc2.Proxy(Bytes(a.to_cframe()))
    np.testing.assert_array_equal(p[55:57], x[55:57])
    assert p._map.held(0) == [0, 5]


def test_special_chunks_are_rebuilt() -> None:
    a = blosc2.zeros((1000,), dtype="f8", chunks=(100,), blocks=(10,))
    src = Bytes(a.to_cframe())
    c = src.get_chunk(3)
    assert len(c) == 32 and blosc2.get_cbuffer_sizes(c)[0] == 800
    np.testing.assert_array_equal(blosc2.Proxy(src)[...], a[...])
    n = blosc2.full((100,), np.nan, dtype="f4", chunks=(10,))
    assert np.isnan(blosc2.Proxy(Bytes(n.to_cframe()))[...]).all()


def test_an_index_kept_by_a_cache_is_checked_before_it_is_used() -> None:
    _, frame = _big()
    src = Bytes(frame)
    state = src._index_state([])
    assert state["offsets"] == b""  # nothing read yet
    assert len(src._offsets) == 2
    state = src._index_state([])
    fresh = Bytes(frame)
    fresh._adopt_index(state)
    assert fresh._index is not None and len(fresh.reads) == 1
    for bad in (
        {**state, "offsets": state["offsets"][:8]},
        {**state, "offsets": struct.pack("<2q", 10**12, 0)},  # past the data area
        {**state, "offsets": struct.pack("<2q", -1, -1)},  # not a special value
        {**state, "bpc": 7},
        "junk",
    ):
        again = Bytes(frame)
        again._adopt_index(bad)
        assert again._index is None, bad


def _corrupt(frame: bytes, pos: int, value: bytes) -> bytes:
    return frame[:pos] + value + frame[pos + len(value) :]


def test_hostile_frames_are_refused() -> None:
    _, frame = _big()
    with pytest.raises(NotAFrameError, match="contiguous frame"):
        Bytes(b"not a frame at all" * 4)
    with pytest.raises(NotAFrameError):
        Bytes(frame[:50])
    with pytest.raises(FormatError):
        Bytes(_corrupt(frame, 11, struct.pack(">i", 10**9)))  # header_len past the frame
    plain = blosc2.SChunk(chunksize=100, data=bytes(300)).to_cframe()
    with pytest.raises(NotImplementedError, match="b2nd metalayer"):
        Bytes(plain)


def test_a_damaged_index_is_refused_when_read() -> None:
    _, frame = _big()
    src = Bytes(frame)
    h = src._fh
    ipos = h.index_pos
    src.frame = _corrupt(frame, ipos + 12, struct.pack("<i", 10**8))  # index cbytes
    with pytest.raises(FormatError):
        _ = src._offsets


def test_a_truncated_chunk_is_refused() -> None:
    _, frame = _big()
    src = Bytes(frame)
    offsets = src._offsets
    src.frame = frame[: int(offsets[1]) + 100]  # chunk 1 cut short
    with pytest.raises(FormatError):
        src.get_chunk(1)
