"""chunk/ranged.py: ranged reads of a stored chunk through ``fetch(pos, n)`` — what is fetched
(counted with a fake fetch) and that the bytes equal a whole decode, over codecs and filters."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import FormatError
from pyblosc2.chunk import ranged
from pyblosc2.chunk.decode import decode_chunk
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.chunk.layout import ChunkLayout
from pyblosc2.chunk.ranged import PARTIAL_READ_MIN, read_range
from pyblosc2.chunk.special import make_special_chunk
from pyblosc2.constants import Codec, Filter, SpecialValue, SplitMode

VECTORS = json.loads((Path(__file__).parents[1] / "golden" / "spec_vectors.json").read_text())
DATA = np.arange(60_000, dtype=np.int32) * 7 // 3  # 240,000 bytes
TEXT = (b"blosc chunk frame numpy array of the zarr " * 6000)[:240_000]


class Fetcher:
    """A fake storage: the chunk's bytes (padded), recording every fetch."""

    def __init__(self, chunk: bytes, pad: int = 0) -> None:
        self.data = chunk + b"\xee" * pad
        self.calls: list[tuple[int, int]] = []

    def __call__(self, pos: int, n: int) -> bytes:
        self.calls.append((pos, n))
        return self.data[pos : pos + n]

    @property
    def fetched(self) -> int:
        return sum(n for _, n in self.calls)


def _c(data: bytes | np.ndarray, **kw: object) -> bytes:
    kw.setdefault("typesize", 4)
    kw.setdefault("nthreads", 1)
    return pb.compress2(data, **kw)


CHUNKS = {
    "lz4-shuffle-split": lambda: _c(DATA, codec=Codec.LZ4, blocksize=16_384),
    "zstd-unsplit": lambda: _c(DATA, codec=Codec.ZSTD, blocksize=16_384),
    "zlib-nofilter": lambda: _c(DATA, codec=Codec.ZLIB, filters=[0], blocksize=20_000),
    "lz4-always-split": lambda: _c(
        DATA, codec=Codec.LZ4, blocksize=16_384, splitmode=SplitMode.ALWAYS_SPLIT
    ),
    "delta-shuffle": lambda: _c(
        DATA, codec=Codec.LZ4, filters=[Filter.DELTA, Filter.SHUFFLE], blocksize=8_192
    ),
    "delta-zstd-leftover": lambda: _c(
        DATA[:59_999], codec=Codec.ZSTD, filters=[Filter.DELTA], blocksize=12_000
    ),
    "bitshuffle": lambda: _c(DATA, codec=Codec.LZ4, filters=[Filter.BITSHUFFLE], blocksize=8_192),
    "bytedelta": lambda: _c(
        DATA,
        codec=Codec.ZSTD,
        filters=[Filter.SHUFFLE, Filter.BYTEDELTA],
        filters_meta=[0, 4],
        blocksize=16_384,
    ),
    "lz4-dict": lambda: _c(TEXT, typesize=1, codec=Codec.LZ4, use_dict=True, blocksize=4_096),
    "zstd-dict": lambda: _c(TEXT, typesize=1, codec=Codec.ZSTD, use_dict=True, blocksize=4_096),
    "leftover-split": lambda: _c(DATA[:59_000], codec=Codec.LZ4, blocksize=16_384),
    "many-small-blocks": lambda: _c(DATA, codec=Codec.LZ4, blocksize=1_024),
    "many-blocks-leftover": lambda: _c(DATA[:59_999], codec=Codec.LZ4, blocksize=1_024),
    "blosclz-small": lambda: _c(DATA[:3_000], codec=Codec.BLOSCLZ, blocksize=2_048),
    "memcpyed": lambda: _c(DATA, clevel=0),
    "one-block": lambda: _c(DATA[:100], codec=Codec.LZ4),
    "special-zero": lambda: make_special_chunk(SpecialValue.ZERO, 40_000, 4),
    "special-value": lambda: make_special_chunk(SpecialValue.VALUE, 40_000, 8, np.float64(2.5)),
    "special-nan": lambda: make_special_chunk(SpecialValue.NAN, 40_000, 4),
    "vl-blocks": lambda: bytes.fromhex(VECTORS["V20"]["hex"]),
    "empty": lambda: _c(b"", typesize=1),
}
RANGES = [
    (0, 1),
    (5, 9),
    (16_383, 16_385),
    (50_000, 70_000),
    (100_000, 10**9),
    (0, 10**9),
    (-5, 3),
    (9, 9),
    (239_990, 240_010),
]


@pytest.fixture(scope="module", params=sorted(CHUNKS))
def chunk(request: pytest.FixtureRequest) -> bytes:
    return CHUNKS[request.param]()


@pytest.mark.parametrize(("lo", "hi"), RANGES)
@pytest.mark.parametrize("min_partial", [0, PARTIAL_READ_MIN])
def test_same_bytes_as_a_whole_decode(chunk: bytes, lo: int, hi: int, min_partial: int) -> None:
    whole = decode_chunk(chunk)
    got = read_range(Fetcher(chunk), len(chunk), lo, hi, min_partial=min_partial)
    assert got.dtype == np.uint8
    assert got.tobytes() == whole[max(lo, 0) : max(hi, 0)].tobytes()


@pytest.mark.parametrize(("lo", "hi"), [(0, 1), (50_000, 70_000), (239_000, 240_000)])
def test_threads_give_the_same_bytes(chunk: bytes, lo: int, hi: int) -> None:
    one = read_range(Fetcher(chunk), len(chunk), lo, hi, 1, min_partial=0)
    assert read_range(Fetcher(chunk), len(chunk), lo, hi, 2, min_partial=0).tobytes() == (
        one.tobytes()
    )


def _expected_fetches(chunk: bytes, lo: int, hi: int) -> list[tuple[int, int]]:
    """The fetches of a regular chunk, worked out from the spec (§6.2, §11, §14) directly."""
    h = ChunkHeader.from_bytes(chunk)
    hl, nb, bs = h.header_len, h.nblocks, h.effective_blocksize
    starts = np.frombuffer(chunk, "<i4", nb, hl)
    calls = [(0, 32), (hl, 4 * nb + (4 if h.use_dict else 0))]
    spans = []
    if h.use_dict:
        dsize = struct.unpack_from("<i", chunk, hl + 4 * nb)[0]
        spans.append((hl + 4 * nb + 4, hl + 4 * nb + 4 + dsize))
    blocks = set(range(lo // bs, (min(hi, h.nbytes) - 1) // bs + 1))
    if Filter.DELTA in h.filters:
        blocks.add(0)
    for j in blocks:
        later = starts[starts > starts[j]]
        spans.append((int(starts[j]), int(later.min()) if later.size else h.cbytes))
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return calls + [(a, b - a) for a, b in merged]


REGULAR = [k for k in sorted(CHUNKS) if k not in {"memcpyed", "vl-blocks", "empty"}]
REGULAR = [k for k in REGULAR if not k.startswith("special")]


@pytest.mark.parametrize("name", REGULAR)
@pytest.mark.parametrize(("lo", "hi"), [(0, 1), (40_000, 40_004), (16_383, 16_385), (0, 3_000)])
def test_fetches_only_the_needed_spans(name: str, lo: int, hi: int) -> None:
    chunk = CHUNKS[name]()
    f = Fetcher(chunk)
    got = read_range(f, len(chunk), lo, hi, min_partial=0)
    assert got.tobytes() == decode_chunk(chunk)[lo:hi].tobytes()
    assert f.calls == _expected_fetches(chunk, lo, hi)


@pytest.mark.parametrize(
    ("name", "lo", "hi", "most"),
    [
        ("lz4-shuffle-split", 100_000, 100_004, 1 / 8),
        ("many-small-blocks", 100_000, 100_004, 1 / 20),
        ("zstd-dict", 100_000, 100_004, 1 / 4),
    ],
)
def test_a_small_range_reads_a_small_part(name: str, lo: int, hi: int, most: float) -> None:
    chunk = CHUNKS[name]()
    f = Fetcher(chunk)
    read_range(f, len(chunk), lo, hi, min_partial=0)
    assert f.fetched < len(chunk) * most


def test_delta_fetches_block_zero() -> None:
    chunk = CHUNKS["delta-shuffle"]()
    f = Fetcher(chunk)
    got = read_range(f, len(chunk), 100_000, 100_004, min_partial=0)
    assert got.view(np.int32)[0] == DATA[25_000]
    first_block = struct.unpack_from("<i", chunk, 32)[0]
    assert any(pos == first_block for pos, _ in f.calls)


@pytest.mark.parametrize("name", sorted(CHUNKS))
def test_small_chunks_are_fetched_whole_once(name: str) -> None:
    chunk = CHUNKS[name]()
    f = Fetcher(chunk)
    read_range(f, len(chunk), 10, 20, min_partial=len(chunk) + 1)
    assert f.calls == [(0, len(chunk))]


@pytest.mark.parametrize("name", ["memcpyed", "lz4-shuffle-split"])
def test_chunk_below_threshold_after_header_is_fetched_in_two(name: str) -> None:
    chunk = CHUNKS[name]()
    f = Fetcher(chunk, pad=5_000)
    bound = len(chunk) + 5_000  # an upper bound, as a frame's data area gives
    got = read_range(f, bound, 10, 20, min_partial=len(chunk) + 1)
    assert got.tobytes() == decode_chunk(chunk)[10:20].tobytes()
    assert f.calls == [(0, 32), (32, len(chunk) - 32)]


def test_memcpyed_fetches_just_the_range() -> None:
    chunk = CHUNKS["memcpyed"]()
    f = Fetcher(chunk)
    got = read_range(f, len(chunk), 1_000, 1_010, min_partial=0)
    assert got.tobytes() == DATA.tobytes()[1_000:1_010]
    assert got.flags.writeable
    assert f.calls == [(0, 32), (32 + 1_000, 10)]


@pytest.mark.parametrize("name", ["special-zero", "special-value", "special-nan", "vl-blocks"])
def test_special_and_vl_chunks_are_fetched_whole(name: str) -> None:
    chunk = CHUNKS[name]()
    f = Fetcher(chunk)
    read_range(f, len(chunk), 3, 7, min_partial=0)
    assert f.fetched == len(chunk)
    assert f.calls[0] == (0, min(32, len(chunk)))


def test_upper_bound_is_not_read_past() -> None:
    chunk = CHUNKS["zstd-unsplit"]()
    f = Fetcher(chunk, pad=100_000)
    got = read_range(f, len(chunk) + 100_000, 239_000, 240_000, min_partial=0)
    assert got.tobytes() == DATA.tobytes()[239_000:240_000]
    assert max(pos + n for pos, n in f.calls) == len(chunk)


def _patched(chunk: bytes, fmt: str, offset: int, value: int) -> bytes:
    b = bytearray(chunk)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def test_header_cbytes_beyond_the_bound() -> None:
    chunk = CHUNKS["lz4-shuffle-split"]()
    with pytest.raises(FormatError, match="cbytes") as exc:
        read_range(Fetcher(chunk), len(chunk) - 1, 0, 4, min_partial=0)
    assert exc.value.offset == 12


@pytest.mark.parametrize(
    ("name", "fmt", "offset", "value", "field", "calls"),
    [
        # blocksize 4: 60,000 block starts cannot fit in the chunk; nothing more is fetched
        ("lz4-shuffle-split", "<i", 8, 4, "bstarts", 1),
        # a block start past the chunk end
        ("lz4-shuffle-split", "<i", 36, 10**7, "bstarts[1]", 2),
        # a dictionary size above 32 KiB: the dictionary is not fetched
        ("lz4-dict", "<i", 32 + 4 * 59, 10**6, "dsize", 2),
        ("lz4-dict", "<i", 32 + 4 * 59, 0, "dsize", 2),
    ],
)
def test_sizes_are_checked_before_they_drive_a_fetch(
    name: str, fmt: str, offset: int, value: int, field: str, calls: int
) -> None:
    chunk = CHUNKS[name]()
    if name == "lz4-dict":
        assert ChunkHeader.from_bytes(chunk).nblocks == 59
    bad = _patched(chunk, fmt, offset, value)
    f = Fetcher(bad)
    with pytest.raises(FormatError) as exc:
        read_range(f, len(bad), 0, 4, min_partial=0)
    assert exc.value.field == field
    assert len(f.calls) == calls


def test_a_corrupt_stream_in_a_fetched_block_is_an_error() -> None:
    chunk = CHUNKS["lz4-shuffle-split"]()
    first = struct.unpack_from("<i", chunk, 32)[0]
    bad = _patched(chunk, "<i", first, 10**6)  # csize of block 0 stream 0
    with pytest.raises(FormatError, match="csize"):
        read_range(Fetcher(bad), len(bad), 0, 4, min_partial=0)
    # a block that is not read is not checked
    assert read_range(Fetcher(bad), len(bad), 100_000, 100_004, min_partial=0).size == 4


def test_a_short_fetch_is_an_error() -> None:
    chunk = CHUNKS["lz4-shuffle-split"]()
    with pytest.raises(FormatError, match="truncated"):
        read_range(lambda pos, n: chunk[pos : pos + n][:-1], len(chunk), 0, 4, min_partial=0)


def test_negative_bound_is_an_error() -> None:
    with pytest.raises(FormatError):
        read_range(Fetcher(b""), -1, 0, 4)


def test_a_reader_of_some_blocks_refuses_others() -> None:
    from pyblosc2.chunk.decode import ChunkReader
    from pyblosc2.chunk.layout import ChunkLayout

    chunk = CHUNKS["lz4-shuffle-split"]()
    view = memoryview(chunk)
    layout = ChunkLayout.parse(ChunkHeader.from_bytes(chunk), lambda p, n: view[p : p + n])
    reader = ChunkReader.from_layout(layout, view, [1])
    assert reader.decode_range(16_384, 16_388).tobytes() == DATA.tobytes()[16_384:16_388]
    with pytest.raises(pb.ParamError, match=r"blocks \[0\]"):
        reader.decode_range(0, 4)
    with pytest.raises(pb.ParamError):
        reader.decode()


@pytest.mark.parametrize(("gap", "fetches"), [(1 << 14, 1), (0, 3)])
def test_nearby_blocks_are_fetched_together(
    monkeypatch: pytest.MonkeyPatch, gap: int, fetches: int
) -> None:
    """Blocks less than GAP_BYTES apart are fetched in one span (the bytes between them
    read but not used); with no gap allowed, one span per block. The blocks decode the same."""
    chunk = CHUNKS["lz4-shuffle-split"]()
    h = ChunkHeader.from_bytes(chunk)
    lay = ChunkLayout.parse(h, lambda p, n: chunk[p : p + n])
    monkeypatch.setattr(ranged, "GAP_BYTES", gap)
    f = Fetcher(chunk)
    reader = ranged.stored_reader(f, lay)
    f.calls.clear()
    blocks = [1, 3, 5]
    bs = h.effective_blocksize
    got = ranged.with_blocks(
        f, reader, blocks, lambda b: [b.decode_range(j * bs, (j + 1) * bs) for j in blocks]
    )
    assert len(f.calls) == fetches
    whole = decode_chunk(chunk)
    for j, part in zip(blocks, got, strict=True):
        assert part.tobytes() == whole[j * bs : (j + 1) * bs].tobytes()
    assert f.fetched < len(chunk)
