"""chunk/streams.py: the stream-level reading every decoder shares (spec §6.3, §15)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.chunk.streams import MAX_RUN, ChunkStreams
from pyblosc2.errors import FormatError


def _chunk(data: np.ndarray, blocksize: int = 0) -> bytes:
    return encode_chunk(data.data.cast("B"), EncodeSpec(data.itemsize, 5, 1, blocksize=blocksize))


def test_a_reader_is_its_streams() -> None:
    r = ChunkReader.open(_chunk(np.arange(4096, dtype=np.int32), 4096))
    assert isinstance(r, ChunkStreams)
    assert r.header is r.layout.header and r.bstarts is r.layout.bstarts


def test_decode_streams_gives_a_blocks_shuffled_bytes() -> None:
    a = np.arange(1024, dtype=np.int32)
    r = ChunkReader.open(_chunk(a, 4096))
    planes = np.empty(4096, np.uint8)
    r.decode_streams(0, planes)
    # the block's byte planes: plane k is byte k of every item
    assert np.array_equal(planes.reshape(4, 1024).T.copy().view(np.int32).ravel(), a)


def test_decode_block_undoes_the_pipeline() -> None:
    a = np.arange(2048, dtype=np.int32)
    r = ChunkReader.open(_chunk(a, 4096))
    out = np.empty(4096, np.uint8)
    r.decode_block(1, out, None)
    assert np.array_equal(out.view(np.int32), a[1024:])


def test_stream_header_of_a_cut_csize_names_it() -> None:
    r = ChunkReader.open(_chunk(np.arange(1024, dtype=np.int32), 4096))
    with pytest.raises(FormatError, match="csize") as exc:
        r.stream_header(0, 0, r.header.cbytes - 2, 1024)
    assert "truncated" in str(exc.value)


def test_a_run_longer_than_max_run_is_refused() -> None:
    buf = bytearray(_chunk(np.zeros(1024, dtype=np.int32) + 7, 4096))
    r = ChunkReader.open(buf)
    assert r.stream_header(0, 0, int(r.bstarts[0]), 1024)[0] < 0  # a run stream (§6.3)
    struct.pack_into("<i", buf, int(r.bstarts[0]), -(MAX_RUN + 1))
    with pytest.raises(FormatError, match="run length"):
        ChunkReader.open(buf)
