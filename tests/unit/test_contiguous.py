"""frame/contiguous.py: how a ranged read of an open frame's chunk asks its store for bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.contiguous import SMALL_CHUNK, WHOLE_CACHE, FrameReader
from pyblosc2.frame.header import HEADER_MINLEN


def _frame(
    path: Path, items_per_chunk: int, clevel: int, nchunks: int = 4
) -> tuple[pb.SChunk, list[int]]:
    """An on-disk frame of ``nchunks`` int64 chunks (random data at clevel 0:
    incompressible), opened read-only, with a log of the sizes its store is asked for."""
    size = nchunks * items_per_chunk
    data = np.random.default_rng(0).integers(0, 2**62, size, dtype=np.int64)
    cp = pb.CParams(typesize=8, codec=pb.Codec.LZ4, clevel=clevel)
    pb.SChunk(chunksize=8 * items_per_chunk, data=data, urlpath=str(path), mode="w", cparams=cp)
    s = pb.open(str(path), mode="r")
    reader: FrameReader = s._frame.reader
    asked: list[int] = []
    read = reader.source.read

    def logged(pos: int, n: int) -> bytes | memoryview:
        asked.append(n)
        return read(pos, n)

    reader.source.read = logged  # type: ignore[method-assign]
    return s, asked


def _chunk_requests(asked: list[int]) -> list[int]:
    """The requests but the read hold's poll of the header prefix (the shared-file rule)."""
    return [n for n in asked if n != HEADER_MINLEN]


def test_small_chunk_is_read_in_one_request(tmp_path: Path) -> None:
    s, asked = _frame(tmp_path / "small.b2frame", 1024, 5)  # 8 KiB chunks
    expected = np.frombuffer(s.decompress_chunk(2), np.int64)[7]
    assert s._frame.reader._layouts == {}
    asked.clear()
    assert np.frombuffer(s[2 * 1024 + 7], np.int64)[0] == expected
    requests = _chunk_requests(asked)
    assert len(requests) == 1 and requests[0] <= SMALL_CHUNK
    assert s._frame.reader._layouts == {2: None}  # read whole from now on
    kept = s._frame.reader._wholes[2]  # (memcpyed: its bytes, kept unparsed by the light read)
    assert list(s._frame.reader._wholes) == [2]
    cbytes = len(kept[0].buf)
    asked.clear()
    for i in (7, 9):
        assert s[2 * 1024 + i] == s.decompress_chunk(2)[8 * i : 8 * i + 8]
    # its bytes read again in one request each time (compared with the kept ones), parsed
    # from the kept bytes at the second read; decompress_chunk reads a header and the chunk
    assert _chunk_requests(asked) == [cbytes, 32, cbytes] * 2
    reader = s._frame.reader._wholes[2][0]
    assert reader.buf == kept[0].buf and reader.header.cbytes == cbytes


def test_parsed_small_chunks_kept_are_bounded(tmp_path: Path) -> None:
    """At most WHOLE_CACHE parsed chunks are kept, the oldest dropped first; a chunk dropped
    is read again in one request (known small: its bytes, parsed once) and gives the same
    item."""
    n = WHOLE_CACHE + 3
    s, asked = _frame(tmp_path / "many.b2frame", 1024, 5, nchunks=n)
    whole = np.frombuffer(s[:], np.int64)
    s._frame.reader._wholes.clear()
    for k in range(n):
        assert np.frombuffer(s[k * 1024 + 5], np.int64)[0] == whole[k * 1024 + 5]
    assert list(s._frame.reader._wholes) == list(range(3, n))
    asked.clear()
    assert np.frombuffer(s[5], np.int64)[0] == whole[5]
    assert len(_chunk_requests(asked)) == 1
    assert list(s._frame.reader._wholes)[-1] == 0 and len(s._frame.reader._wholes) == WHOLE_CACHE


def test_large_chunk_is_read_by_ranges(tmp_path: Path) -> None:
    """A chunk larger than SMALL_CHUNK keeps the ranged read: its layout is cached and only
    the block holding the item is fetched."""
    s, asked = _frame(tmp_path / "large.b2frame", 64 * 1024, 0)  # 512 KiB, incompressible
    expected = np.frombuffer(s.decompress_chunk(1), np.int64)[-1]
    asked.clear()
    assert np.frombuffer(s[2 * 64 * 1024 - 1], np.int64)[0] == expected
    assert s._frame.reader._layouts[1] is not None
    assert sum(_chunk_requests(asked)) < 64 * 1024 * 8 // 4


@pytest.mark.parametrize("clevel", [0, 5])
def test_one_item_reads_match_whole_chunks(tmp_path: Path, clevel: int) -> None:
    s, _ = _frame(tmp_path / "f.b2frame", 1024, clevel)
    whole = np.frombuffer(s[:], np.int64)
    for i in (0, 1023, 1024, 2047, 4095, 3000):
        assert np.frombuffer(s[i], np.int64)[0] == whole[i]


@pytest.mark.parametrize("contiguous_file", [True, False], ids=["file", "memory"])
def test_the_bytes_an_open_frame_was_read_from_are_what_is_on_disk(
    tmp_path: Path, contiguous_file: bool
) -> None:
    """Opening keeps the header, index and trailer bytes it parsed (``seen``) as the
    sharing state, instead of reading them a second time: they are the bytes on disk."""
    s, _ = _frame(tmp_path / "f.b2frame", 1024, 5)
    if not contiguous_file:
        s = pb.schunk_from_cframe(s.to_cframe())
    frame = s._frame
    assert frame.reader.seen is not None
    assert frame.reader.seen == frame._on_disk(frame.reader) == frame._seen
    empty = pb.SChunk(chunksize=64, urlpath=str(tmp_path / "e.b2frame"), mode="w")
    reopened = pb.open(empty.urlpath, mode="r")._frame
    assert reopened.reader.seen is None and reopened._seen == reopened._on_disk(reopened.reader)
