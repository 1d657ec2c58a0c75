"""chunk/streams.py: the stream-level reading every decoder shares (spec §6.3, §15)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _walked(r: ChunkReader, j: int) -> tuple[list[int], list[int], list[int]]:
    """Block ``j``'s stream headers read one by one with stream_header (the reference)."""
    nst = r.header.nstreams(j)
    ne = r.header.block_size(j) // nst
    pos = int(r.bstarts[j])
    sizes, starts, ends = [], [], []
    for s in range(nst):
        csize, start, pos = r.stream_header(j, s, pos, ne)
        sizes.append(csize)
        starts.append(start)
        ends.append(pos)
    return sizes, starts, ends


@settings(max_examples=60, deadline=None)
@given(
    typesize=st.sampled_from([1, 2, 4, 8]),
    nitems=st.integers(1, 40_000),
    blocksize=st.sampled_from([0, 256, 1024, 4096]),
    codec=st.sampled_from([1, 5]),
    split=st.sampled_from([1, 2, 3]),
    kind=st.sampled_from(["random", "runs", "ramp"]),
    seed=st.integers(0, 2**16),
)
def test_checked_streams_are_the_walked_headers(
    typesize: int, nitems: int, blocksize: int, codec: int, split: int, kind: str, seed: int
) -> None:
    """The stream headers kept while checking (few blocks walked, many vectorised) are
    those stream_header reads, for every block, and decoding with them gives the data."""
    rng = np.random.default_rng(seed)
    nbytes = nitems * typesize
    if kind == "random":
        data = rng.integers(0, 256, nbytes, dtype=np.uint8)
    elif kind == "runs":
        data = np.repeat(rng.integers(0, 3, nbytes // 64 + 1, dtype=np.uint8), 64)[:nbytes]
    else:
        data = np.arange(nbytes, dtype=np.uint8)
    raw = encode_chunk(
        memoryview(data), EncodeSpec(typesize, 5, codec, splitmode=split, blocksize=blocksize)
    )
    r = ChunkReader.open(raw)
    if r.layout.kind.name != "BLOCKS":
        return
    assert sorted(r.streams) == list(range(r.header.nblocks))
    for j in range(r.header.nblocks):
        assert r.streams[j] == _walked(r, j)
        assert r.block_streams(j) == _walked(r, j)
    assert np.array_equal(r.decode(), data)


@pytest.mark.parametrize("nblocks", [4, 40, 160])  # walked one by one / vectorised over blocks
def test_a_bad_csize_in_any_block_is_refused_before_decoding(nblocks: int) -> None:
    a = np.random.default_rng(1).integers(0, 1000, nblocks * 256, dtype=np.int32)
    buf = bytearray(_chunk(a, 1024))
    r = ChunkReader.open(buf)
    j = nblocks - 2
    start = r.streams[j][1][2]  # stream 2 of block j: its csize made to run past cbytes
    struct.pack_into("<i", buf, start - 4, r.header.cbytes)
    with pytest.raises(FormatError, match=rf"block {j} stream 2.*csize"):
        ChunkReader.open(buf)


def test_an_unchecked_reader_walks_a_block_when_it_decodes_it() -> None:
    """A reader built without the check (ranged reads) reads a block's headers when it
    decodes it, and refuses a bad one with its block and stream."""
    a = np.random.default_rng(2).integers(0, 1000, 4 * 256, dtype=np.int32)
    buf = bytearray(_chunk(a, 1024))
    r = ChunkReader.open(buf)
    start = r.streams[1][1][3]
    struct.pack_into("<i", buf, start - 4, -(MAX_RUN + 1))
    bad = r.with_bytes(memoryview(bytes(buf)), [0, 1, 2, 3], check=False)
    out = np.empty(1024, np.uint8)
    bad.decode_streams(0, out)  # block 0 is intact
    assert np.array_equal(out.reshape(4, 256).T.copy().view(np.int32).ravel(), a[:256])
    with pytest.raises(FormatError, match=r"block 1 stream 3.*run length"):
        bad.decode_streams(1, out)
    with pytest.raises(FormatError, match="block 1 stream 3"):
        bad.block_streams(1)
