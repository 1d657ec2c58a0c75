"""chunk/firstread.py: a range inside one block of a chunk read with no reader set up."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.chunk.firstread import read_in_block
from pyblosc2.chunk.layout import ChunkKind
from pyblosc2.chunk.special import make_special_chunk
from pyblosc2.constants import Codec, SpecialValue, SplitMode
from pyblosc2.errors import FormatError
from tests.helpers import make_data

SHUFFLE = (0, 0, 0, 0, 0, 1)
NONE = (0, 0, 0, 0, 0, 0)
#: (name, filters, served): pipelines the first read serves, and two it leaves to the reader
PIPELINES = [
    ("none", NONE, True),
    ("shuffle", SHUFFLE, True),
    ("bitshuffle", (0, 0, 0, 0, 0, 2), False),
    ("delta+shuffle", (0, 0, 0, 0, 3, 1), False),
]


def _chunk(kind: str, typesize: int, codec: int, filters: tuple[int, ...], split: int) -> bytes:
    data = make_data(kind, 10_000 * typesize + 3 * typesize, typesize)  # a leftover block
    bs = 1024 * typesize
    spec = EncodeSpec(typesize, 5, codec, filters=filters, splitmode=split, blocksize=bs)
    return encode_chunk(memoryview(data), spec)


@pytest.mark.parametrize("kind", ["smooth", "random", "runs"])
@pytest.mark.parametrize("typesize", [1, 3, 8])
@pytest.mark.parametrize("codec", [Codec.BLOSCLZ, Codec.LZ4, Codec.ZSTD])
@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p[0] for p in PIPELINES])
@pytest.mark.parametrize("split", [SplitMode.ALWAYS_SPLIT, SplitMode.NEVER_SPLIT])
def test_ranges_in_one_block_match_the_reader(
    kind: str, typesize: int, codec: int, pipeline: tuple[str, tuple[int, ...], bool], split: int
) -> None:
    c = _chunk(kind, typesize, codec, pipeline[1], split)
    r = ChunkReader.open(c)
    h = r.header
    bs = h.effective_blocksize
    rng = np.random.default_rng(typesize)
    cases = [(0, 1), (bs - 1, bs), (bs, bs + typesize), ((h.nblocks - 1) * bs, h.nbytes)]
    cases += [
        (int(a), int(a) + int(n))
        for a, n in zip(rng.integers(0, h.nbytes - 64, 20), rng.integers(1, 64, 20), strict=True)
    ]
    served = 0
    for lo, hi in cases:
        got = read_in_block(c, lo, hi)
        if lo // bs != (hi - 1) // bs:
            assert got is None
            continue
        if got is not None:
            served += 1
            assert bytes(got) == bytes(r.decode_range(lo, hi)), (lo, hi)
            assert got.dtype == np.uint8 and got.flags.writeable  # as the reader's
    # (incompressible data is stored memcpyed: served; zeros as a special chunk: not served)
    kind = r.layout.kind
    served_kind = (pipeline[2] and kind == ChunkKind.BLOCKS) or kind == ChunkKind.MEMCPYED
    assert (served > 0) == served_kind


def test_writes_into_out() -> None:
    c = _chunk("smooth", 8, Codec.LZ4, SHUFFLE, SplitMode.ALWAYS_SPLIT)
    out = np.zeros(24, np.uint8)
    got = read_in_block(c, 8 * 100, 8 * 102, out[8:])
    assert got is not None and np.shares_memory(got, out)
    assert bytes(out[8:24]) == bytes(ChunkReader.open(c).decode_range(800, 816))


@pytest.mark.parametrize("blocksize", [0, 4096])
def test_memcpyed_chunks_are_read_where_they_lie(blocksize: int) -> None:
    """A memcpyed chunk (clevel 0; C-Blosc2 stores small index chunks so) is served from
    its bytes after the header, within one block; a cbytes that is not nbytes + 32 or a
    short buffer is left to the reader, which names it."""
    data = np.arange(4096, dtype=np.int32).data.cast("B")
    c = encode_chunk(data, EncodeSpec(4, 0, Codec.LZ4, blocksize=blocksize))
    r = ChunkReader.open(c)
    assert r.layout.kind == ChunkKind.MEMCPYED
    bs = r.header.effective_blocksize
    for lo, hi in [(0, 4), (8, 40), (4096, 4100), (len(data) - 3, len(data))]:
        if lo // bs == (hi - 1) // bs:
            got = read_in_block(c, lo, hi)
            assert got is not None and bytes(got) == bytes(data[lo:hi]) and got.flags.writeable
    out = np.zeros(8, np.uint8)
    got = read_in_block(c, 100, 104, out[2:])
    assert got is not None and np.shares_memory(got, out)
    assert bytes(out[2:6]) == bytes(data[100:104])
    if bs < len(data):
        assert read_in_block(c, bs - 4, bs + 4) is None
    assert read_in_block(c[:-1], 0, 4) is None  # short
    bad = bytearray(c)
    struct.pack_into("<i", bad, 12, len(c) - 1)  # cbytes != nbytes + 32
    assert read_in_block(bytes(bad), 0, 4) is None
    with pytest.raises(FormatError, match="cbytes"):
        ChunkReader.open(bytes(bad))


def test_chunks_it_does_not_serve() -> None:
    data = np.arange(4096, dtype=np.int32).data.cast("B")
    special = make_special_chunk(SpecialValue.ZERO, 4096, 4)
    assert read_in_block(special, 0, 4) is None
    assert read_in_block(encode_chunk(data, EncodeSpec(4, 5, Codec.LZ4)), 8, 4) is None


def _bad_chunks() -> list[tuple[str, bytes, int]]:
    """(case, a chunk of 4 shuffled blocks damaged in its block 1, a byte of block 1)."""
    data = make_data("smooth", 4 * 4096, 8)
    c = encode_chunk(memoryview(data), EncodeSpec(8, 5, Codec.LZ4, blocksize=4096))
    h = pb.get_chunk_header(c)
    b1 = struct.unpack_from("<i", c, 32 + 4)[0]
    cases = []

    def patched(at: int, fmt: str, value: int) -> bytes:
        out = bytearray(c)
        struct.pack_into(fmt, out, at, value)
        return bytes(out)

    cases.append(("bstart past cbytes", patched(36, "<i", h.cbytes), 4096))
    cases.append(("bstart in the header", patched(36, "<i", 8), 4096))
    cases.append(("csize past cbytes", patched(b1, "<i", h.cbytes), 4096))
    cases.append(("run length < -255", patched(b1, "<i", -300), 4096))
    run = bytearray(patched(b1, "<i", -7))
    run[b1 + 4] = 2  # a run token with bit 0 clear
    cases.append(("run token", bytes(run), 4096))
    cases.append(("undecodable stream", patched(b1 + 4, "<I", 0xFFFFFFFF), 4096))
    cases.append(("cut short", c[: b1 + 6], 4096))
    cases.append(("blocks past cbytes", patched(12, "<i", 40), 4096))
    return cases


@pytest.mark.parametrize("case", _bad_chunks(), ids=lambda c: c[0])
def test_a_damaged_block_is_left_to_the_reader_which_names_it(case: tuple[str, bytes, int]) -> None:
    _, c, at = case
    assert read_in_block(c, at, at + 8) is None
    with pytest.raises(FormatError):
        ChunkReader.open(c).decode_range(at, at + 8)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_damage_elsewhere_is_not_read_and_damage_here_never_escapes(data: st.DataObject) -> None:
    """Bytes changed anywhere: the read returns None or a result of the range's size, never
    an exception; changes to the other blocks' bytes do not change what it returns."""
    raw = make_data("smooth", 4 * 4096, 8)
    c = bytearray(encode_chunk(memoryview(raw), EncodeSpec(8, 5, Codec.LZ4, blocksize=4096)))
    b1, b2 = struct.unpack_from("<ii", c, 32 + 4)
    lo = data.draw(st.integers(4096, 8191 - 8))
    at = data.draw(st.integers(0, len(c) - 1))
    c[at] ^= data.draw(st.integers(1, 255))
    got = read_in_block(bytes(c), lo, lo + 8)
    assert got is None or len(got) == 8
    if got is not None and (b2 <= at or 48 <= at < b1) and b1 < b2:
        assert bytes(got) == raw[lo : lo + 8]


def test_a_first_read_sets_up_no_reader_and_the_next_one_keeps_its_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "f.b2frame")
    data = np.arange(8 * 1024, dtype=np.int64)
    cp = {"typesize": 8, "codec": pb.Codec.LZ4}
    pb.SChunk(chunksize=8 * 1024, data=data, urlpath=path, mode="w", cparams=cp)
    s = pb.open(path, mode="r")
    made: list[int] = []
    from_layout = ChunkReader.from_layout.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(1)
        return from_layout(cls, *args, **kwargs)

    monkeypatch.setattr(ChunkReader, "from_layout", classmethod(counted))
    for i in (5 * 1024 + 9, 7 * 1024, 3 * 1024 + 5):
        assert np.frombuffer(s[i], np.int64)[0] == i
    assert made == []  # three first reads: no reader
    assert np.frombuffer(s[3 * 1024 + 6], np.int64)[0] == 3 * 1024 + 6
    assert len(made) == 1  # the second read of chunk 3 parses it
    held = s._frame.reader._held
    assert held is not None and held.n == 3 and held.image is not None  # and keeps its block
    assert np.frombuffer(s[5 * 1024 + 1], np.int64)[0] == 5 * 1024 + 1
    assert len(made) == 2


def test_a_damaged_chunk_read_first_is_named(tmp_path: Path) -> None:
    path = tmp_path / "f.b2frame"
    data = np.arange(8 * 1024, dtype=np.int64)
    cp = {"typesize": 8, "codec": pb.Codec.LZ4}
    s = pb.SChunk(chunksize=8 * 1024, data=data, urlpath=str(path), mode="w", cparams=cp)
    off = int(s.chunk_offsets[2]) + s.header.header_len
    del s
    raw = bytearray(path.read_bytes())
    bstart = struct.unpack_from("<i", raw, off + 32)[0]
    struct.pack_into("<i", raw, off + bstart, 10**6)  # block 0's first csize
    path.write_bytes(bytes(raw))
    s = pb.open(str(path), mode="r")
    with pytest.raises(FormatError, match="block 0 stream 0"):
        s[2 * 1024 + 1]
    assert np.frombuffer(s[1], np.int64)[0] == 1


def test_a_stream_past_cbytes_is_refused_when_the_buffer_holds_its_bytes() -> None:
    """A buffer may hold bytes after the chunk (a frame's next chunk): a stream that ends
    past the header's ``cbytes`` is not read even though its bytes are there."""
    rng = np.random.default_rng(3)
    items = rng.integers(0, 2**62, 512, dtype=np.int64) << 8  # plane 0 a run, the rest raw
    c = bytearray(encode_chunk(items.data.cast("B"), EncodeSpec(8, 5, Codec.LZ4)))
    assert pb.get_chunk_header(bytes(c)).nblocks == 1
    assert read_in_block(bytes(c), 8, 16) is not None
    struct.pack_into("<i", c, 12, len(c) - 10)  # cbytes now cuts the last (raw) stream
    assert read_in_block(bytes(c), 8, 16) is None
    with pytest.raises(FormatError):
        ChunkReader.open(bytes(c)).decode_range(8, 16)
