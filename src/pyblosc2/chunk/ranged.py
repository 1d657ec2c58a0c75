"""Decoding a byte range of a stored chunk while reading only the bytes it needs (spec §14,
§6.2; frame-format.md §4.5).

:func:`read_range` reads a chunk through ``fetch(pos, n)``: the header, then the block starts
(and dictionary size), then the dictionary and the byte spans of the blocks covering the range
(plus block 0 when DELTA is in the pipeline), one fetch per merged span. A block's span ends at
the next larger block start, or at ``cbytes``. The layout is parsed and checked by
:class:`~.layout.ChunkLayout`, the streams of the fetched blocks by
:class:`~.decode.ChunkReader`, exactly as for a chunk held in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from .._threads import SCRATCH_MAX, thread_cache
from ..constants import EXTENDED_HEADER_LENGTH
from ..context import ChunkContext
from ..errors import FormatError
from .decode import ChunkReader
from .header import OFF_CBYTES, ChunkHeader
from .layout import ChunkKind, ChunkLayout, merge_spans

__all__ = [
    "GAP_BYTES",
    "PARTIAL_READ_MIN",
    "FetchFn",
    "coalesce",
    "read_blocks_range",
    "read_blocks_ranges",
    "read_range",
    "stored_reader",
    "with_blocks",
]

T = TypeVar("T")

#: ``fetch(pos, n)``: bytes ``[pos, pos + n)`` of one stored chunk
FetchFn = Callable[[int, int], bytes | bytearray | memoryview]

#: chunks smaller than this many bytes are fetched whole, in one call
PARTIAL_READ_MIN = 1 << 18


def read_range(
    fetch: FetchFn,
    cbytes: int,
    lo: int,
    hi: int,
    nthreads: int = 1,
    *,
    min_partial: int = PARTIAL_READ_MIN,
) -> np.ndarray:
    """Bytes ``[lo, hi)`` (clipped to ``[0, nbytes)``) of the decoded chunk that
    ``fetch(pos, n)`` reads, as a new ``uint8`` array.

    ``cbytes`` is the size of the stored chunk, or an upper bound on it (e.g. the bytes left in
    a frame's data area): the header's ``cbytes`` must not exceed it and nothing past it is
    fetched. A chunk is fetched whole, in one call, when ``cbytes < min_partial``; after its
    header, also when its own ``cbytes`` is below ``min_partial`` or it is special, VL-block or
    empty. A memcpyed chunk fetches the header and then just the bytes of the range. Any other
    chunk fetches its header, its block starts (and dictionary size), then its dictionary and
    the spans of the blocks needed, merging adjacent spans into one fetch. Every fetch must
    return exactly the bytes asked for.

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> data = np.arange(20_000, dtype=np.int32)
    >>> c = encode_chunk(data.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=8192))
    >>> calls = []
    >>> def fetch(pos, n):
    ...     calls.append((pos, n)); return c[pos : pos + n]
    >>> read_range(fetch, len(c), 40_000, 40_008, min_partial=0).view(np.int32)
    array([10000, 10001], dtype=int32)
    >>> len(calls), sum(n for _, n in calls) < len(c) // 4
    (3, True)
    """
    if cbytes < 0:
        raise FormatError("chunk", "cbytes", None, "a size >= 0", cbytes)
    if cbytes < min_partial:
        whole = _fetch(fetch, 0, cbytes)
        return ChunkReader.open(whole).decode_range(lo, hi, nthreads)
    head = _fetch(fetch, 0, min(cbytes, EXTENDED_HEADER_LENGTH))
    h = ChunkHeader.from_bytes(head)
    if h.cbytes > cbytes:
        raise FormatError(
            "chunk header",
            "cbytes",
            OFF_CBYTES,
            f"at most {cbytes} (bytes the stored chunk may occupy)",
            h.cbytes,
        )
    buf = np.zeros(h.cbytes, np.uint8)  # pages never written cost nothing
    n = min(len(head), h.cbytes)
    buf[:n] = np.frombuffer(head, np.uint8, n)
    if h.cbytes < min_partial or h.special or h.vl_blocks or h.nbytes == 0:
        if h.cbytes > n:
            buf[n:] = np.frombuffer(_fetch(fetch, n, h.cbytes - n), np.uint8)
        return ChunkReader.open(buf.data).decode_range(lo, hi, nthreads)

    def read(pos: int, size: int) -> memoryview:
        # Only asked for bytes before h.cbytes, after the layout checked the sizes.
        buf[pos : pos + size] = np.frombuffer(_fetch(fetch, pos, size), np.uint8)
        return buf.data[pos : pos + size]

    layout = ChunkLayout.parse(h, read)
    lo, hi = max(0, lo), min(hi, h.nbytes)
    if hi <= lo:
        return np.empty(0, np.uint8)
    if layout.kind == ChunkKind.MEMCPYED:
        out = np.empty(hi - lo, np.uint8)
        out[:] = np.frombuffer(_fetch(fetch, h.header_len + lo, hi - lo), np.uint8)
        return out
    blocks = layout.needed_blocks(lo, hi)
    spans = layout.block_spans(blocks)
    if layout.dict_span is not None:
        spans = merge_spans([*spans, layout.dict_span])
    for a, b in spans:
        read(a, b - a)
    reader = ChunkReader.from_layout(layout, buf.data, blocks)
    return reader.decode_range(lo, hi, nthreads)


def stored_reader(
    fetch: FetchFn, layout: ChunkLayout, ctx: ChunkContext | None = None
) -> ChunkReader:
    """A reader of the stored chunk of regular blocks laid out as ``layout`` (checked) that
    holds its dictionary but no block yet: :func:`read_blocks_range` rebinds it to the
    blocks each read fetches, so a frame can cache it per chunk. (A memcpyed chunk's reader
    serves ranges by fetching just their bytes.)"""
    if layout.kind not in (ChunkKind.BLOCKS, ChunkKind.MEMCPYED):
        raise FormatError(
            "chunk", "kind", None, "a chunk of regular blocks or memcpyed", layout.kind.value
        )
    span = layout.dict_span
    head = np.zeros(0 if span is None else span[1], np.uint8)
    if span is not None:
        head[span[0] :] = np.frombuffer(_fetch(fetch, span[0], span[1] - span[0]), np.uint8)
    return ChunkReader.from_layout(layout, head.data, (), ctx)


def read_blocks_range(
    fetch: FetchFn,
    reader: ChunkReader,
    lo: int,
    hi: int,
    out: np.ndarray | None = None,
    nthreads: int = 1,
) -> np.ndarray:
    """Bytes ``[lo, hi)`` (clipped) of the stored chunk that ``reader`` (from
    :func:`stored_reader`) describes: one fetch per merged span of the needed blocks, then
    those blocks decoded, into ``out`` when given.

    The fetched spans are placed at their offsets in a zeroed image of the chunk, as
    :func:`read_range` does; the image is kept per thread and zeroed again after use.

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> data = np.arange(20_000, dtype=np.int32)
    >>> c = encode_chunk(data.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=8192))
    >>> lay = ChunkLayout.parse(ChunkHeader.from_bytes(c), lambda p, n: c[p : p + n])
    >>> calls = []
    >>> def fetch(pos, n):
    ...     calls.append((pos, n)); return c[pos : pos + n]
    >>> r = stored_reader(fetch, lay)
    >>> read_blocks_range(fetch, r, 40_000, 40_008).view(np.int32), len(calls)
    (array([10000, 10001], dtype=int32), 1)
    """
    return read_blocks_ranges(fetch, reader, [(lo, hi)], [out], nthreads)[0]


def read_blocks_ranges(
    fetch: FetchFn,
    reader: ChunkReader,
    ranges: Sequence[tuple[int, int]],
    outs: Sequence[np.ndarray | None],
    nthreads: int = 1,
) -> list[np.ndarray]:
    """:func:`read_blocks_range` for several byte ranges of one chunk at once: the blocks
    they need are fetched together (one fetch per merged span) and checked once."""
    layout = reader.layout
    h = layout.header
    if layout.kind == ChunkKind.MEMCPYED:  # just the bytes of each range
        got = []
        for (lo, hi), out in zip(ranges, outs, strict=True):
            lo, hi = max(0, lo), max(min(hi, h.nbytes), max(0, lo))
            dst = np.empty(hi - lo, np.uint8) if out is None else out[: hi - lo]
            if hi > lo:
                dst[:] = np.frombuffer(_fetch(fetch, h.header_len + lo, hi - lo), np.uint8)
            got.append(dst)
        return got
    needed: set[int] = set()
    for lo, hi in ranges:
        needed.update(layout.needed_blocks(lo, hi))
    return with_blocks(
        fetch,
        reader,
        sorted(needed),
        lambda bound: [
            bound.decode_range(lo, hi, nthreads, out)
            for (lo, hi), out in zip(ranges, outs, strict=True)
        ],
    )


#: stored blocks this close are fetched together by :func:`with_blocks`
GAP_BYTES = 1 << 14


def with_blocks(
    fetch: FetchFn,
    reader: ChunkReader,
    blocks: Sequence[int],
    use: Callable[[ChunkReader], T],
    check: bool = True,
) -> T:
    """``use(bound)``, where ``bound`` is ``reader`` (from :func:`stored_reader`, a chunk of
    regular blocks) over the stored bytes of ``blocks`` (sorted block numbers), fetched one
    merged span at a time into this thread's zeroed image of the chunk (spans less than
    :data:`GAP_BYTES` apart fetched as one: the gap's bytes are read but not used); their
    streams are checked before ``use`` sees them (``check``; see
    :meth:`ChunkReader.with_bytes`).

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> data = np.arange(20_000, dtype=np.int32)
    >>> c = encode_chunk(data.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=8192))
    >>> lay = ChunkLayout.parse(ChunkHeader.from_bytes(c), lambda p, n: c[p : p + n])
    >>> r = stored_reader(lambda p, n: c[p : p + n], lay)
    >>> with_blocks(lambda p, n: c[p : p + n], r, [4], lambda b: b.present)
    frozenset({4})
    """
    h = reader.layout.header
    if reader.layout.kind != ChunkKind.BLOCKS:
        kind = reader.layout.kind.value
        raise FormatError("chunk", "kind", None, "a chunk of regular blocks", kind)
    spans = coalesce(reader.layout.block_spans(blocks), GAP_BYTES)
    image = _zeroed_image(h.cbytes)
    try:
        for a, b in spans:
            image[a:b] = np.frombuffer(_fetch(fetch, a, b - a), np.uint8)
        return use(reader.with_bytes(image.data, blocks, check))
    finally:
        for a, b in spans:
            image[a:b] = 0


def coalesce(spans: list[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    """Sorted, disjoint ``spans`` with those less than ``gap`` bytes apart joined: one fetch
    instead of several (a positioned read or a request costs more than reading the bytes
    between them; the benchmark's cross-sections read 4 blocks 1-2 KiB apart per chunk).

    >>> coalesce([(0, 10), (12, 20), (100, 110)], 8)
    [(0, 20), (100, 110)]
    """
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and a - out[-1][1] < gap:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _zeroed_image(cbytes: int) -> np.ndarray:
    """A zeroed ``cbytes`` buffer: this thread's, kept zeroed by its users, when small."""
    if cbytes > SCRATCH_MAX:
        return np.zeros(cbytes, np.uint8)
    cache = thread_cache("ranged")
    image = cache.get("image")
    if image is None or len(image) < cbytes:
        image = cache["image"] = np.zeros(cbytes, np.uint8)
    return image[:cbytes]


def _fetch(fetch: FetchFn, pos: int, n: int) -> bytes | bytearray | memoryview:
    """``fetch(pos, n)``, which must return exactly ``n`` bytes."""
    data = fetch(pos, n)
    got = memoryview(data).nbytes
    if got != n:
        raise FormatError("chunk", "data", pos, f"{n} bytes from storage", f"{got} (truncated)")
    return data
