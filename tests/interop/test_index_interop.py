"""The offsets index as appends write it (frame-format.md §4.3, writer.IndexEncoder), against
python-blosc2 both ways: whole 16 KiB blocks are the streams C writes, the growing last block
is a raw stream C reads, and frames of thousands of chunks go back and forth."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.frame.writer import IndexEncoder, encode_index

PER_BLOCK = 2048  # offsets in one 16 KiB index block
N = 2 * PER_BLOCK + 100  # two whole blocks and a partial one


def _index_of(path) -> bytes:
    """The index chunk of a contiguous frame file."""
    s = pb.open(str(path), mode="r")
    h = s._frame.header
    raw = path.read_bytes()
    start = h.header_len + h.cbytes
    return raw[start : start + struct.unpack_from("<i", raw, start + 12)[0]]


def _block_streams(index: bytes) -> list[bytes]:
    """The bytes of each block of an index chunk, in order."""
    r = ChunkReader.open(index)
    return [bytes(r.buf[a:b]) for a, b in r.layout.spans]


def _chunk(lib, i: int) -> bytes:
    return lib.compress2(
        np.full(4, i, np.int32), typesize=4, codec=lib.Codec.LZ4, clevel=5, nthreads=1
    )


def _appended(lib, path, n: int, start: int = 0):
    s = lib.SChunk(
        chunksize=16, urlpath=str(path), contiguous=True, mode="w", cparams={"typesize": 4}
    )
    for i in range(start, start + n):
        s.append_chunk(_chunk(lib, i))
    return s


def _check_reads(s, n: int) -> None:
    assert s.nchunks == n
    for i in (0, PER_BLOCK - 1, PER_BLOCK, n // 2, n - 1):
        assert np.frombuffer(s.decompress_chunk(i), np.int32).tolist() == [i] * 4


@pytest.mark.slow
def test_appended_index_whole_blocks_are_cs_and_c_reads_it(cblosc2, tmp_path) -> None:
    ours, theirs = tmp_path / "ours.b2frame", tmp_path / "c.b2frame"
    _appended(pb, ours, N)  # (the handles close as they are dropped)
    _appended(cblosc2, theirs, N)
    ours_idx, c_idx = _index_of(ours), _index_of(theirs)
    assert ours_idx[:4].hex() == c_idx[:4].hex() == "05011508"
    mine, cs = _block_streams(ours_idx), _block_streams(c_idx)
    assert len(mine) == len(cs) == 3
    assert mine[:2] == cs[:2]  # the whole blocks: C's streams, byte for byte
    assert struct.unpack_from("<i", mine[2])[0] == 8 * 100  # the last one raw
    _check_reads(cblosc2.open(str(ours), mode="r"), N)


@pytest.mark.slow
def test_c_frame_extended_by_appends_reads_in_c(cblosc2, tmp_path) -> None:
    path = tmp_path / "c.b2frame"
    _appended(cblosc2, path, N)
    s = pb.open(str(path), mode="a")
    for i in range(N, N + 30):
        s.append_chunk(_chunk(pb, i))
    del s
    _check_reads(cblosc2.open(str(path), mode="r"), N + 30)
    _check_reads(pb.open(str(path), mode="r"), N + 30)


def test_in_memory_frame_with_a_partial_block_reads_in_c(cblosc2) -> None:
    s = pb.SChunk(chunksize=16, cparams={"typesize": 4})
    for i in range(PER_BLOCK + 5):
        s.append_chunk(_chunk(pb, i))
    _check_reads(cblosc2.schunk_from_cframe(s.to_cframe()), PER_BLOCK + 5)


@pytest.mark.parametrize("n", [1, 3, 4, 100, PER_BLOCK - 1, PER_BLOCK, PER_BLOCK + 1, N])
def test_encoded_index_decodes_in_c(cblosc2, n: int) -> None:
    offsets = np.cumsum(np.random.default_rng(n).integers(30, 500, n)).astype(np.int64)
    idx = encode_index(offsets)
    assert np.frombuffer(cblosc2.decompress2(idx), "<i8").tolist() == offsets.tolist()


def test_encoder_keeps_unchanged_blocks_and_redoes_changed_ones() -> None:
    enc = IndexEncoder()
    offsets = np.arange(N, dtype=np.int64) * 64
    first = enc.encode(offsets)
    offsets[5] = 7  # block 0 changes
    second = enc.encode(offsets)
    assert _block_streams(second)[1:] == _block_streams(first)[1:]
    assert _block_streams(second)[0] != _block_streams(first)[0]
    assert second == encode_index(offsets)  # the same bytes as a fresh encoder
    assert pb.decompress2(second) == offsets.tobytes()


def test_sparse_appends_read_in_c_and_count_their_objects(cblosc2, tmp_path) -> None:
    path = tmp_path / "s.b2frame"
    s = pb.SChunk(chunksize=16, urlpath=str(path), contiguous=False, cparams={"typesize": 4})
    n = PER_BLOCK + 10
    for i in range(n):
        s.append_chunk(_chunk(pb, i))
    sizes = sum(p.stat().st_size for p in path.glob("*.chunk"))
    assert s._frame.header.cbytes == sizes  # what a rewrite would count
    del s
    _check_reads(cblosc2.open(str(path), mode="r"), n)
    _check_reads(pb.open(str(path), mode="r"), n)
