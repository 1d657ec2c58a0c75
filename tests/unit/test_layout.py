"""chunk/layout.py: the kind, block starts, dictionary span and block spans of a chunk, and the
checks of spec §6.2, §11, §12 and §15 that need more than the header."""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import FormatError
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.chunk.layout import ChunkKind, ChunkLayout, merge_spans
from pyblosc2.constants import Codec, Filter, SpecialValue

VECTORS = json.loads((Path(__file__).parents[1] / "golden" / "spec_vectors.json").read_text())
DATA = np.arange(10_000, dtype=np.int32)
TEXT = (b"blosc chunk frame numpy array of the zarr " * 200)[:8_192]


class Reads:
    """``read(pos, n)`` over a chunk, recording the calls."""

    def __init__(self, chunk: bytes) -> None:
        self.chunk = chunk
        self.calls: list[tuple[int, int]] = []

    def __call__(self, pos: int, n: int) -> bytes:
        self.calls.append((pos, n))
        return self.chunk[pos : pos + n]


def _empty_chunk() -> bytes:
    """An nbytes-0 chunk that is not memcpyed (C-Blosc2 writes memcpyed ones)."""
    chunk = bytearray(pb.compress2(b"", typesize=1))
    chunk[2] &= ~0x02
    return bytes(chunk)


def _parse(chunk: bytes) -> tuple[ChunkLayout, Reads]:
    r = Reads(chunk)
    return ChunkLayout.parse(ChunkHeader.from_bytes(chunk), r), r


def _patched(chunk: bytes, fmt: str, offset: int, value: int) -> bytes:
    b = bytearray(chunk)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


@pytest.mark.parametrize(
    ("chunk", "kind"),
    [
        (pb.compress2(DATA, typesize=4, blocksize=4096), ChunkKind.BLOCKS),
        (pb.compress2(DATA, typesize=4, clevel=0), ChunkKind.MEMCPYED),
        (pb.compress2(bytes(4000), typesize=4), ChunkKind.SPECIAL),
        (pb.make_special_chunk(SpecialValue.NAN, 64, 8), ChunkKind.SPECIAL),
        (pb.compress2(b"", typesize=1), ChunkKind.MEMCPYED),
        (_empty_chunk(), ChunkKind.EMPTY),
        (bytes.fromhex(VECTORS["V20"]["hex"]), ChunkKind.VL_BLOCKS),
    ],
    ids=["blocks", "memcpyed", "zeros", "nan", "memcpyed-empty", "empty", "vl"],
)
def test_kind(chunk: bytes, kind: ChunkKind) -> None:
    layout, reads = _parse(chunk)
    assert layout.kind == kind
    if kind in (ChunkKind.BLOCKS, ChunkKind.VL_BLOCKS):
        assert len(layout.bstarts) == layout.header.nblocks
        assert reads.calls == [(32, 4 * layout.header.nblocks)]
    else:
        assert layout.bstarts.size == 0 and reads.calls == []


def test_bstarts_and_data_start() -> None:
    chunk = pb.compress2(DATA, typesize=4, codec=Codec.LZ4, blocksize=4096)
    layout, _ = _parse(chunk)
    nb = layout.header.nblocks
    assert nb == 10
    assert layout.bstarts.tolist() == np.frombuffer(chunk, "<i4", nb, 32).tolist()
    assert layout.data_start == 32 + 4 * nb == layout.bstarts[0]
    assert layout.dict_span is None


def test_dictionary_span_matches_the_spec_example() -> None:
    # spec §11: 8 blocks of 1 KiB, dsize 409 at offset 64, dictionary at 68..476
    chunk = pb.compress2(
        TEXT, typesize=1, clevel=5, codec=Codec.LZ4, use_dict=True, blocksize=1024, nthreads=1
    )
    layout, reads = _parse(chunk)
    assert layout.dict_span == (68, 477)
    assert layout.data_start == 477 == layout.bstarts[0]
    assert reads.calls == [(32, 36)]  # block starts and dsize in one read


@pytest.mark.parametrize(
    ("start", "stop", "blocks", "needed_delta"),
    [
        (0, 1, [0], [0]),
        (4095, 4097, [0, 1], [0, 1]),
        (8192, 8196, [2], [0, 2]),
        (39_000, 10**9, [9], [0, 9]),
        (-10, 1, [0], [0]),
        (5, 5, [], []),
        (40_000, 40_010, [], []),
    ],
)
def test_blocks_for_and_needed_blocks(
    start: int, stop: int, blocks: list[int], needed_delta: list[int]
) -> None:
    plain = pb.compress2(DATA, typesize=4, codec=Codec.LZ4, blocksize=4096)
    delta = pb.compress2(DATA, typesize=4, codec=Codec.LZ4, blocksize=4096, filters=[Filter.DELTA])
    assert list(_parse(plain)[0].blocks_for(start, stop)) == blocks
    assert _parse(plain)[0].needed_blocks(start, stop) == blocks
    assert _parse(delta)[0].has_delta and not _parse(plain)[0].has_delta
    assert _parse(delta)[0].needed_blocks(start, stop) == needed_delta


def _layout_with(bstarts: list[int], cbytes: int) -> ChunkLayout:
    h = ChunkHeader(5, 1, 0x05, 1, 4096 * len(bstarts), 4096, cbytes)
    return ChunkLayout(h, ChunkKind.BLOCKS, np.array(bstarts, np.int64))


@pytest.mark.parametrize(
    ("bstarts", "blocks", "spans"),
    [
        ([100, 200, 300], [0], [(100, 200)]),
        ([100, 200, 300], [2], [(300, 1000)]),
        ([100, 200, 300], [0, 1], [(100, 300)]),  # adjacent blocks: one span
        ([100, 200, 300], [0, 2], [(100, 200), (300, 1000)]),
        ([300, 100, 200], [0], [(300, 1000)]),  # blocks stored out of order
        ([300, 100, 200], [1], [(100, 200)]),
        ([100, 100, 500], [1], [(100, 500)]),  # two blocks sharing a start
        ([100, 200, 300], [], []),
    ],
)
def test_block_spans(bstarts: list[int], blocks: list[int], spans: list[tuple[int, int]]) -> None:
    assert _layout_with(bstarts, 1000).block_spans(blocks) == spans


@pytest.mark.parametrize(
    ("spans", "merged"),
    [
        ([], []),
        ([(0, 5)], [(0, 5)]),
        ([(5, 8), (0, 5)], [(0, 8)]),
        ([(0, 10), (2, 4)], [(0, 10)]),
        ([(0, 4), (5, 8)], [(0, 4), (5, 8)]),
    ],
)
def test_merge_spans(spans: list[tuple[int, int]], merged: list[tuple[int, int]]) -> None:
    assert merge_spans(spans) == merged


BLOCKS = pb.compress2(DATA, typesize=4, codec=Codec.LZ4, blocksize=4096)
DICT = pb.compress2(TEXT, typesize=1, codec=Codec.LZ4, use_dict=True, blocksize=1024)
VL = bytes.fromhex(VECTORS["V20"]["hex"])
MEMCPY = pb.compress2(DATA[:100], typesize=4, clevel=0)


@pytest.mark.parametrize(
    ("chunk", "fmt", "offset", "value", "field", "error"),
    [
        (BLOCKS, "<i", 8, 4, "bstarts", FormatError),  # too many blocks for cbytes
        (BLOCKS, "<i", 32, 10, "bstarts[0]", FormatError),  # inside the block starts
        (BLOCKS, "<i", 36, len(BLOCKS), "bstarts[1]", FormatError),  # at cbytes
        (DICT, "<i", 64, 0, "dsize", FormatError),
        (DICT, "<i", 64, 40_000, "dsize", FormatError),
        (DICT, "<i", 64, len(DICT), "dsize", FormatError),
        (MEMCPY, "<i", 12, len(MEMCPY) - 1, "cbytes", FormatError),
        (BLOCKS, "B", 31, 0x50, "blosc2_flags", FormatError),  # special id 5
        (BLOCKS, "B", 31, 0x08, None, NotImplementedError),  # lazy
        (BLOCKS, "B", 31, 0x80, None, NotImplementedError),  # instrumented
        (BLOCKS, "B", 31, 0x02, None, NotImplementedError),  # big-endian
        (BLOCKS, "<i", 8, 4094, "blocksize", FormatError),  # not a multiple of typesize
    ],
)
@pytest.mark.parametrize("spans", [True, False], ids=["spans", "no-spans"])
def test_malformed(
    chunk: bytes, fmt: str, offset: int, value: int, field: str | None, error: type, spans: bool
) -> None:
    bad = _patched(chunk, fmt, offset, value)
    with pytest.raises(error) as exc:
        ChunkLayout.parse(ChunkHeader.from_bytes(bad), Reads(bad), spans=spans)
    if field is not None:
        assert exc.value.field == field


MANY = pb.compress2(np.arange(40 * 512, dtype=np.int64).tobytes(), typesize=8, blocksize=4096)


@pytest.mark.parametrize(
    "chunk", [BLOCKS, MANY, DICT, VL, MEMCPY], ids=["blocks", "many", "dict", "vl", "memcpy"]
)
def test_a_layout_without_spans_is_the_same_but_them(chunk: bytes) -> None:
    """``spans=False`` (the index chunk of an open frame) checks what ``parse`` checks and
    gives the same layout, only without the block spans of ranged reads."""
    full, _ = _parse(chunk)
    lean = ChunkLayout.parse(ChunkHeader.from_bytes(chunk), Reads(chunk), spans=False)
    assert lean.spans == ()
    for f in dataclasses.fields(ChunkLayout):
        if f.name not in ("spans", "bstarts"):
            assert getattr(lean, f.name) == getattr(full, f.name), f.name
    np.testing.assert_array_equal(lean.bstarts, full.bstarts, strict=True)


def test_vl_block_starts_must_increase() -> None:
    h = ChunkHeader.from_bytes(VL)
    assert h.nblocks >= 2
    first = struct.unpack_from("<i", VL, 32)[0]
    bad = _patched(VL, "<i", 36, first)
    with pytest.raises(FormatError, match="strictly increasing") as exc:
        _parse(bad)
    assert exc.value.field == "bstarts[1]"


def test_empty_chunk_with_data_is_an_error() -> None:
    chunk = _empty_chunk() + b"\0" * 4
    bad = _patched(chunk, "<i", 12, 36)
    with pytest.raises(FormatError, match="empty chunk"):
        _parse(bad)
